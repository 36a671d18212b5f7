#include "job_registry.h"

namespace zipper::forwarder {

std::vector<std::shared_ptr<Connection>> Job::members() const {
  std::lock_guard lk(mu_);
  std::vector<std::shared_ptr<Connection>> out;
  for (const auto& c : slots_)
    if (c) out.push_back(c);
  return out;
}

JobRegistry::JoinResult JobRegistry::join(std::uint64_t job_id, std::uint32_t np_low,
                                          std::uint32_t np_high, std::uint32_t vrank,
                                          const std::shared_ptr<Connection>& conn) {
  JoinResult r;
  if (np_low == 0 || np_high == 0 || np_low > (1u << 24) || np_high > (1u << 24)) {
    r.error = "invalid layout " + std::to_string(np_low) + "+" + std::to_string(np_high);
    return r;
  }
  if (vrank >= np_low + np_high) {
    r.error = "rank " + std::to_string(vrank) + " outside layout " + std::to_string(np_low) + "+" +
              std::to_string(np_high);
    return r;
  }
  std::lock_guard lk(mu_);
  auto& job = jobs_[job_id];
  if (!job) job = std::make_shared<Job>(job_id, np_low, np_high);
  if (job->np_low_ != np_low || job->np_high_ != np_high) {
    r.error = "layout " + std::to_string(np_low) + "+" + std::to_string(np_high) +
              " does not match job " + std::to_string(job_id) + "'s " +
              std::to_string(job->np_low_) + "+" + std::to_string(job->np_high_);
    return r;
  }
  std::lock_guard jl(job->mu_);
  if (job->slots_[vrank]) {
    r.error = "rank " + std::to_string(vrank) + " of job " + std::to_string(job_id) +
              " is already connected";
    return r;
  }
  job->slots_[vrank] = conn;
  ++job->connected_;
  if (!job->ready_ && job->connected_ == job->size()) {
    job->ready_ = true;
    r.now_ready = true;
  }
  r.ready = job->ready_;
  r.job = job;
  return r;
}

void JobRegistry::leave(const std::shared_ptr<Connection>& conn) {
  if (!conn->job) return;
  std::lock_guard lk(mu_);
  auto& job = conn->job;
  bool empty = false;
  {
    std::lock_guard jl(job->mu_);
    if (conn->vrank < job->slots_.size() && job->slots_[conn->vrank] == conn) {
      job->slots_[conn->vrank].reset();
      empty = --job->connected_ == 0;
    }
  }
  if (empty) {
    auto it = jobs_.find(job->id());
    if (it != jobs_.end() && it->second == job) {
      jobs_.erase(it);
      finished_.push_back(job);
      if (finished_.size() > kFinishedKept) finished_.pop_front();
    }
  }
}

bool JobRegistry::contains(std::uint64_t job_id) const {
  std::lock_guard lk(mu_);
  return jobs_.count(job_id) != 0;
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
