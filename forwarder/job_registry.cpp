#include "job_registry.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "../proto/site_hello.h"
#include "tenant_share.h"

namespace zipper::forwarder {

std::string Job::job_label(std::uint64_t id, const proto::auth::Fingerprint& fp) {
  unsigned char in[8 + sizeof fp];
  for (int i = 0; i < 8; ++i) in[i] = static_cast<unsigned char>(id >> (8 * i));
  std::memcpy(in + 8, fp.data(), sizeof fp);
  unsigned char h[6];
  crypto_generichash(h, sizeof h, in, sizeof in, nullptr, 0);
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : h) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Job::Job(std::uint64_t id, const proto::auth::Fingerprint& fp, const proto::auth::Key& key,
         std::vector<std::uint32_t> sites, std::optional<std::uint32_t> uid, std::string owner)
    : id_(id),
      fingerprint_(fp),
      key_(key),
      sites_(std::move(sites)),
      from_site_(std::make_unique<TrafficCounters[]>(sites_.size())),
      uid_(uid),
      owner_(std::move(owner)),
      label_(job_label(id, fp)) {
  first_.push_back(0);
  for (std::uint32_t r : sites_) first_.push_back(first_.back() + r);  // checked: below 2^24
}

int Job::site_of(std::uint32_t vrank) const {
  if (vrank >= size()) return -1;
  // The last site whose first rank is at most vrank.
  const auto it = std::upper_bound(first_.begin(), first_.end(), vrank);
  return static_cast<int>(it - first_.begin()) - 1;
}

std::uint64_t Job::frames_relayed() const {
  std::uint64_t n = 0;
  for (std::size_t s = 0; s < sites_.size(); ++s) n += from_site_[s].load().frames;
  return n;
}

std::vector<std::shared_ptr<Connection>> Job::members() const {
  std::lock_guard lk(mu_);
  std::vector<std::shared_ptr<Connection>> out;
  out.reserve(slots_.size());
  for (const auto& [rank, c] : slots_) out.push_back(c);
  return out;
}

namespace {

std::uint32_t count_of(const std::map<std::string, std::uint32_t>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

void decrement(std::map<std::string, std::uint32_t>& m, const std::string& key) {
  if (auto it = m.find(key); it != m.end() && --it->second == 0) m.erase(it);
}

}  // namespace

std::string JobRegistry::check_layout(const std::vector<std::uint32_t>& sites,
                                      std::uint32_t vrank) const {
  std::uint64_t n = 0;
  bool empty_site = false;
  for (std::uint32_t r : sites) {
    n += r;  // at most 64 terms below 2^32 (the hello's decoder): no wrap
    empty_site = empty_site || r == 0;
  }
  const std::string layout = proto::layout_text(sites);
  if (sites.size() < 2 || sites.size() > proto::kMaxHelloSites || empty_site || n > max_ranks_)
    return "invalid layout " + layout + " (2 to " + std::to_string(proto::kMaxHelloSites) +
           " sites of at least 1 rank each, at most " + std::to_string(max_ranks_) +
           " ranks in all: --max-ranks)";
  if (n > max_layout_)
    return "layout " + layout + " needs more than one job's share of connections (at most " +
           std::to_string(max_layout_) + " ranks: --max-job-connections-share)";
  if (vrank >= n) return "rank " + std::to_string(vrank) + " outside layout " + layout;
  return {};
}

std::shared_ptr<Job> JobRegistry::find(std::uint64_t job_id,
                                       const proto::auth::Fingerprint& fp) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(Key{job_id, fp});
  return it == jobs_.end() ? nullptr : it->second;
}

JobRegistry::JoinResult JobRegistry::join(const JoinRequest& req,
                                          const std::shared_ptr<Connection>& conn) {
  JoinResult r;
  r.error = check_layout(req.sites, req.vrank);
  if (!r.error.empty()) return r;
  std::lock_guard lk(mu_);
  auto it = jobs_.find(Key{req.job_id, req.fingerprint});
  const std::string tenant =
      it != jobs_.end() ? it->second->tenant_ : tenant_of(req.uid, req.prefix, req.owner);
  // A tenant's jobs share one job's part of --max-connections (tenant_share.h).
  if (count_of(conns_per_tenant_, tenant) >= max_layout_) {
    r.error = "the jobs of " + tenant + " hold its share of " + std::to_string(max_layout_) +
              " connections (--max-job-connections-share of --max-connections); try again later";
    return r;
  }
  std::shared_ptr<Job> job;
  if (it != jobs_.end()) {
    job = it->second;
  } else {
    if (!req.may_create) {
      r.draining = true;
      r.error = "zipperd is draining for maintenance: no new jobs";
      if (refused_draining_.size() >= 4096) refused_draining_.clear();  // bounded
      r.first_refusal = refused_draining_.insert(Key{req.job_id, req.fingerprint}).second;
      return r;
    }
    // A cap that would refuse the job first evicts an idle job that holds
    // a place under that cap (idle jobs cannot keep others out).
    const auto now = std::chrono::steady_clock::now();
    const auto make_room = [&](bool full, const std::function<bool(const Job&)>& holds) {
      if (!full) return true;
      auto victim = evict_idle_locked(now, holds);
      if (!victim) return false;
      r.evicted.push_back(std::move(victim));
      return true;
    };
    if (!make_room(count_of(jobs_per_owner_, req.owner) >= max_jobs_per_owner_,
                   [&](const Job& j) { return j.owner() == req.owner; })) {
      r.error = "zipperd serves the maximum of " + std::to_string(max_jobs_per_owner_) +
                " jobs for " + req.owner + " (--max-jobs-per-user); try again later";
      return r;
    }
    // The tenant's share: its cap (per uid with MUNGE, else per prefix),
    // and --max-jobs less the reserve kept for tenants that hold no job.
    const std::uint32_t tenant_cap = req.uid ? max_jobs_per_owner_ : max_jobs_per_prefix_;
    for (;;) {
      const JobShare share = job_share(static_cast<std::uint32_t>(jobs_.size()), max_jobs_,
                                       count_of(jobs_per_tenant_, tenant), tenant_cap);
      if (share == JobShare::kAdmit) break;
      std::function<bool(const Job&)> holds;  // any idle job frees a place under --max-jobs
      if (share == JobShare::kTenantAtCap)
        holds = [&](const Job& j) { return j.tenant() == tenant; };
      if (make_room(true, holds)) continue;
      switch (share) {
        case JobShare::kTenantAtCap:
          r.error = req.uid
                        ? "zipperd serves the maximum of " + std::to_string(max_jobs_per_owner_) +
                              " jobs for " + tenant + " (--max-jobs-per-user); try again later"
                        : "zipperd serves the maximum of " + std::to_string(max_jobs_per_prefix_) +
                              " jobs for addresses in " + req.prefix +
                              " (--max-jobs-per-prefix); try again later";
          break;
        case JobShare::kReserveForNew:
          r.error = "zipperd has only the last " + std::to_string(job_reserve(max_jobs_)) +
                    " of its " + std::to_string(max_jobs_) +
                    " jobs (--max-jobs) left, kept for tenants that hold no job, and " + tenant +
                    " holds " + std::to_string(count_of(jobs_per_tenant_, tenant)) +
                    "; try again later";
          break;
        default:
          r.error = "zipperd serves its maximum of " + std::to_string(max_jobs_) +
                    " jobs (--max-jobs); try again later";
      }
      return r;
    }
    ++jobs_per_owner_[req.owner];
    ++jobs_per_tenant_[tenant];  // a new job's first join cannot fail below: it matches it
    job =
        std::make_shared<Job>(req.job_id, req.fingerprint, req.key, req.sites, req.uid, req.owner);
    job->prefix_ = req.prefix;
    job->tenant_ = tenant;
    jobs_.emplace(Key{req.job_id, req.fingerprint}, job);
  }
  if (job->sites_ != req.sites) {
    r.error = "layout " + proto::layout_text(req.sites) + " does not match the job's " +
              proto::layout_text(job->sites_);
    return r;
  }
  if (job->uid_ != req.uid) {
    r.error = "the job belongs to another user";
    return r;
  }
  std::lock_guard jl(job->mu_);
  if (job->slots_.count(req.vrank)) {
    r.error = "rank " + std::to_string(req.vrank) + " of the job is already connected";
    return r;
  }
  if (job->departed_.count(req.vrank)) {
    r.error = "rank " + std::to_string(req.vrank) + " already left the job; its slot is closed";
    return r;
  }
  // Publish only a complete connection: other threads find it through the
  // slot table (under this lock) and read its job and rank.
  conn->job = job;
  conn->vrank = req.vrank;
  conn->admitted.store(true, std::memory_order_release);  // Forwarder::snapshot reads them
  if (req.before_publish) req.before_publish();
  job->slots_.emplace(req.vrank, conn);
  ++conns_per_tenant_[job->tenant_];
  if (!job->ready_ && job->slots_.size() == job->size()) {
    job->ready_ = true;
    r.now_ready = true;
  }
  r.ready = job->ready_;
  r.job = job;
  return r;
}

JobRegistry::LeaveResult JobRegistry::leave(const std::shared_ptr<Connection>& conn) {
  LeaveResult out;
  if (!conn->job) return out;
  std::lock_guard lk(mu_);
  auto& job = conn->job;
  bool empty = false;
  {
    std::lock_guard jl(job->mu_);
    auto it = job->slots_.find(conn->vrank);
    if (it != job->slots_.end() && it->second == conn) {
      job->slots_.erase(it);
      job->departed_.insert(conn->vrank);
      decrement(conns_per_tenant_, job->tenant_);
      empty = job->slots_.empty();
    }
  }
  if (empty) {
    auto it = jobs_.find(Key{job->id(), job->fingerprint_});
    if (it != jobs_.end() && it->second == job) {
      forget_locked(job);
      finished_.push_back(job);
      if (finished_.size() > kFinishedKept) finished_.pop_front();
      out.finished = true;
    }
  }
  return out;
}

void JobRegistry::forget_locked(const std::shared_ptr<Job>& job) {
  jobs_.erase(Key{job->id(), job->fingerprint_});
  decrement(jobs_per_owner_, job->owner());
  decrement(jobs_per_tenant_, job->tenant());
}

void JobRegistry::sample_activity(std::chrono::steady_clock::time_point now) {
  std::lock_guard lk(mu_);
  for (auto& [key, job] : jobs_) {
    const std::uint64_t frames = job->frames_relayed();
    if (frames != job->seen_frames_) {
      job->seen_frames_ = frames;
      job->last_active_ = now;
    }
  }
}

std::shared_ptr<Job> JobRegistry::evict_idle(std::chrono::steady_clock::time_point now,
                                             const std::function<bool(const Job&)>& filter) {
  std::lock_guard lk(mu_);
  return evict_idle_locked(now, filter);
}

std::shared_ptr<Job> JobRegistry::evict_idle_locked(std::chrono::steady_clock::time_point now,
                                                    const std::function<bool(const Job&)>& filter) {
  std::shared_ptr<Job> best;
  // (incomplete, jobs of its owner, idle time): larger goes first.
  std::tuple<bool, std::uint32_t, std::chrono::steady_clock::duration> best_rank{};
  for (const auto& [key, job] : jobs_) {
    const auto idle = now - job->last_active_;
    if (idle < idle_evict_ || (filter && !filter(*job))) continue;
    const auto owner = jobs_per_owner_.find(job->owner());
    const std::tuple rank{!job->ready(), owner == jobs_per_owner_.end() ? 0u : owner->second, idle};
    if (!best || rank > best_rank) {
      best = job;
      best_rank = rank;
    }
  }
  if (best) {
    forget_locked(best);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
  return best;
}

bool JobRegistry::contains(std::uint64_t job_id) const {
  std::lock_guard lk(mu_);
  // Jobs are keyed by id and secret fingerprint; any job with this id counts.
  auto it = jobs_.lower_bound(Key{job_id, proto::auth::Fingerprint{}});
  return it != jobs_.end() && it->first.first == job_id;
}

std::vector<std::shared_ptr<Job>> JobRegistry::active() const {
  std::lock_guard lk(mu_);
  std::vector<std::shared_ptr<Job>> out;
  for (const auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

std::vector<std::shared_ptr<Job>> JobRegistry::finished() const {
  std::lock_guard lk(mu_);
  return {finished_.begin(), finished_.end()};
}

std::size_t JobRegistry::job_count() const {
  std::lock_guard lk(mu_);
  return jobs_.size();
}

}  // namespace zipper::forwarder
