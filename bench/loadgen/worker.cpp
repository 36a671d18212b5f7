#include "worker.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "payload_check.h"
#include "virtual_job.h"
#include "virtual_rank.h"

namespace zipper::loadgen {

namespace {

constexpr std::uint64_t kCommandsKey = 0;
constexpr int kRailBits = 4;  // epoll key: rank id << kRailBits | rail
constexpr int kConnectTimeoutMs = 10000;

double cpu_seconds_self() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

Worker::Worker(const Options& o, const std::vector<JobPlan>& plans, int index,
               proto::UniqueFd commands, proto::UniqueFd reports)
    : o_(o),
      plans_(plans),
      index_(index),
      commands_(std::move(commands)),
      reports_(std::move(reports)),
      epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  groups_.assign(o.jobs.size() + 1, GroupStats(o.zipperds.size()));
  // The window is shared by the workers: each keeps its part below the
  // listen backlog's.
  window_ = std::max(1, o.connect_window / o.procs);
  churn_slots_ = churn_concurrency(o, index);
}

Worker::~Worker() = default;

const char* Worker::phase_name() const {
  switch (phase_) {
    case Phase::kAdmit:
      return "admission of the steady jobs";
    case Phase::kAwaitGo:
      return "waiting for the other workers' admission";
    case Phase::kTraffic:
      return "traffic";
    case Phase::kAwaitClose:
      return "waiting for the other workers' traffic";
    case Phase::kClosing:
      return "closing";
  }
  return "?";
}

void Worker::add_rank(VirtualJob& job, std::uint32_t vrank) {
  const std::uint64_t id = next_id_++;
  auto r = std::make_unique<VirtualRank>(job, vrank, id, groups_[job.plan().group], errors_);
  ranks_.emplace(id, r.get());
  for (int rail = 0; rail < r->rails(); ++rail) connect_queue_.emplace_back(id, rail);
  job.ranks.push_back(std::move(r));
  ++job.times.ranks;
}

void Worker::start_connects() {
  while (connecting_ < window_ && !connect_queue_.empty() && errors_.count() == 0) {
    const auto [id, rail] = connect_queue_.front();
    connect_queue_.pop_front();
    const auto it = ranks_.find(id);
    if (it == ranks_.end()) continue;
    VirtualRank& r = *it->second;
    JobTimes& t = r.job().times;
    if (t.first_connect == 0) t.first_connect = now_ns();
    if (!r.begin_connect(rail, kConnectTimeoutMs)) return;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = id << kRailBits | static_cast<std::uint64_t>(rail);
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, r.poll_fd(rail), &ev) != 0) {
      errors_.add(std::string("epoll_ctl: ") + std::strerror(errno));
      return;
    }
    ++connecting_;
    touch(r);  // the link may have failed already
  }
}

void Worker::on_event(std::uint64_t key, std::uint32_t events) {
  const auto it = ranks_.find(key >> kRailBits);
  if (it == ranks_.end()) return;  // a rank that vanished in this round
  const int rail = static_cast<int>(key & ((1u << kRailBits) - 1));
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) it->second->note_peer_hangup(rail);
  it->second->progress(rail);
  touch(*it->second);
}

void Worker::touch(VirtualRank& r) {
  connecting_ -= r.take_newly_admitted();
  VirtualJob& job = r.job();
  const auto n = static_cast<std::uint32_t>(job.ranks.size());
  if (!r.counted_ready && r.ready()) {
    r.counted_ready = true;
    if (++job.ready == n) {
      job.times.all_ready = now_ns();
      if (job.plan().churn) start_traffic(job);  // steady jobs wait for "go"
    }
  }
  if (job.traffic_started && !job.closing) schedule(r, r.pump(now_ns()));
  if (job.traffic_started && !r.counted_done && r.traffic_done()) {
    r.counted_done = true;
    ++job.done;
  }
  if (job.closing && !r.counted_closed && r.closed()) {
    r.counted_closed = true;
    if (++job.closed == n) job.times.closed = now_ns();
  }
}

void Worker::schedule(VirtualRank& r, std::uint64_t due) {
  if (due == 0 || (r.timer_ns != 0 && r.timer_ns <= due)) return;
  r.timer_ns = due;
  timers_.emplace(due, r.id());
}

void Worker::fire_timers(std::uint64_t now) {
  while (!timers_.empty() && timers_.top().first <= now) {
    const auto [due, id] = timers_.top();
    timers_.pop();
    const auto it = ranks_.find(id);
    if (it == ranks_.end() || it->second->timer_ns != due) continue;
    it->second->timer_ns = 0;
    touch(*it->second);
  }
}

void Worker::start_traffic(VirtualJob& job) {
  job.traffic_started = true;
  const std::uint64_t now = now_ns();
  for (auto& r : job.ranks) r->start_traffic(now);
  for (auto& r : job.ranks) touch(*r);
}

void Worker::end_churn_job(VirtualJob& job) {
  job.times.close_start = now_ns();
  if (job.plan().vanish) {
    // Gone without BYE, as when a node dies: the sockets close under zipperd.
    job.times.vanished = true;
    for (auto& r : job.ranks) ranks_.erase(r->id());
    job.ranks.clear();
    job.times.closed = now_ns();
    return;
  }
  job.closing = true;
  for (auto& r : job.ranks) r->begin_close();
  for (auto& r : job.ranks) touch(*r);
}

void Worker::vanish_storm() {
  storm_at_ns_ = 0;
  const std::uint64_t now = now_ns();
  for (auto& job : steady_) {
    if (job->spec().vanish_after_s < 0 || job->times.vanished) continue;
    // As a whole job killed at once: every socket closes, no BYE.
    job->times.close_start = now;
    job->times.vanished = true;
    for (auto& r : job->ranks) ranks_.erase(r->id());
    job->ranks.clear();
    job->done = job->closed = job->times.ranks;
    job->times.closed = now_ns();
  }
}

void Worker::step_churn() {
  for (auto it = churn_.begin(); it != churn_.end();) {
    VirtualJob& job = **it;
    const auto n = static_cast<std::uint32_t>(job.ranks.size());
    if (job.traffic_started && !job.closing && job.times.close_start == 0 && job.done == n)
      end_churn_job(job);
    if (job.times.closed != 0) {
      for (auto& r : job.ranks) ranks_.erase(r->id());
      finished_.emplace_back(job.index(), job.times);
      it = churn_.erase(it);
    } else {
      ++it;
    }
  }
  while (phase_ == Phase::kTraffic && churn_.size() < churn_slots_ && !churn_queue_.empty()) {
    const std::size_t i = churn_queue_.front();
    churn_queue_.pop_front();
    auto job = std::make_unique<VirtualJob>(plans_[i], i, o_);
    for (std::uint32_t v = 0; v < job->spec().layout.size(); ++v) add_rank(*job, v);
    churn_.push_back(std::move(job));
  }
}

void Worker::read_commands() {
  char buf[256];
  for (;;) {
    const ssize_t n = ::read(commands_.get(), buf, sizeof buf);
    if (n > 0) {
      command_buf_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    errors_.add("the coordinator went away");  // EOF or error
    return;
  }
  for (std::size_t nl; (nl = command_buf_.find('\n')) != std::string::npos;) {
    const std::string cmd = command_buf_.substr(0, nl);
    command_buf_.erase(0, nl + 1);
    if (cmd == "go" && phase_ == Phase::kAwaitGo) {
      phase_ = Phase::kTraffic;
      for (auto& job : steady_) {
        start_traffic(*job);
        if (job->spec().vanish_after_s >= 0 && !job->ranks.empty())
          storm_at_ns_ = now_ns() + static_cast<std::uint64_t>(job->spec().vanish_after_s * 1e9);
      }
    } else if (cmd == "close" && phase_ == Phase::kAwaitClose) {
      phase_ = Phase::kClosing;
      const std::uint64_t now = now_ns();
      for (auto& job : steady_) {
        if (job->times.vanished) continue;
        job->closing = true;
        job->times.close_start = now;
        for (auto& r : job->ranks) r->begin_close();
        for (auto& r : job->ranks) touch(*r);
      }
    } else {
      errors_.add("unexpected command '" + cmd + "' from the coordinator in phase " + phase_name());
    }
  }
}

bool Worker::advance() {
  if (errors_.count()) return false;
  const auto all = [&](std::uint32_t VirtualJob::*count) {
    std::uint64_t sum = 0;
    for (const auto& j : steady_) sum += (*j).*count;
    return sum == steady_ranks_;
  };
  switch (phase_) {
    case Phase::kAdmit:
      if (all(&VirtualJob::ready)) {
        phase_ = Phase::kAwaitGo;
        report("ready");
      }
      return true;
    case Phase::kTraffic:
      step_churn();
      if (all(&VirtualJob::done) && churn_.empty() && churn_queue_.empty() && storm_at_ns_ == 0) {
        phase_ = Phase::kAwaitClose;
        report("traffic-done");
      }
      return true;
    case Phase::kClosing:
      return !all(&VirtualJob::closed);
    case Phase::kAwaitGo:
    case Phase::kAwaitClose:
      return true;
  }
  return true;
}

void Worker::time_out() {
  std::string what = "timed out after " + std::to_string(o_.timeout_s) + " s (--timeout) in " +
                     phase_name() + " in worker " + std::to_string(index_);
  int shown = 0;
  const auto show = [&](const VirtualJob& job) {
    for (const auto& r : job.ranks) {
      const bool stuck = phase_ == Phase::kAdmit                    ? !r->ready()
                         : phase_ == Phase::kClosing || job.closing ? !r->closed()
                                                                    : !r->traffic_done();
      if (stuck && shown++ < 5) what += "\n  " + job.name() + " " + r->waiting_for();
    }
  };
  for (const auto& j : steady_) show(*j);
  for (const auto& j : churn_) show(*j);
  errors_.add(what);
}

int Worker::wait_ms(std::uint64_t now) const {
  std::uint64_t ms = 50;  // deadline, churn and window checks
  if (!timers_.empty()) {
    const std::uint64_t due = timers_.top().first;
    ms = std::min<std::uint64_t>(ms, due > now ? (due - now + 999999) / 1000000 : 0);
  }
  if (storm_at_ns_ != 0)
    ms = std::min<std::uint64_t>(ms,
                                 storm_at_ns_ > now ? (storm_at_ns_ - now + 999999) / 1000000 : 0);
  return static_cast<int>(ms);
}

void Worker::report(const std::string& line) {
  const std::string out = line + "\n";
  std::size_t off = 0;
  while (off < out.size()) {
    const ssize_t n = ::write(reports_.get(), out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the coordinator is gone: nobody to tell
    off += static_cast<std::size_t>(n);
  }
}

std::string Worker::result_json() const {
  nlohmann::json groups = nlohmann::json::array(), jobs = nlohmann::json::array();
  for (const auto& g : groups_) groups.push_back(g.to_json());
  for (const auto& j : steady_) jobs.push_back({j->index(), j->times.to_json()});
  for (const auto& j : churn_) jobs.push_back({j->index(), j->times.to_json()});
  for (const auto& [i, t] : finished_) jobs.push_back({i, t.to_json()});
  return nlohmann::json{{"worker", index_},
                        {"errors", errors_.first()},
                        {"error_count", errors_.count()},
                        {"groups", groups},
                        {"jobs", jobs},
                        {"cpu_s", cpu_seconds_self()}}
      .dump();
}

int Worker::run() {
  deadline_ns_ = now_ns() + static_cast<std::uint64_t>(o_.timeout_s) * 1000000000ull;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kCommandsKey;
  if (!epoll_ || epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, commands_.get(), &ev) != 0)
    errors_.add(std::string("epoll: ") + std::strerror(errno));
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    const JobPlan& p = plans_[i];
    if (p.churn) {
      if (p.worker == index_) churn_queue_.push_back(i);
      continue;
    }
    auto job = std::make_unique<VirtualJob>(p, i, o_);
    for (std::uint32_t v = 0; v < p.spec->layout.size(); ++v)
      if (p.serves(index_, o_.procs, v)) add_rank(*job, v);
    steady_ranks_ += static_cast<std::uint32_t>(job->ranks.size());
    steady_.push_back(std::move(job));
  }
  epoll_event evs[256];
  while (errors_.count() == 0) {
    if (now_ns() >= deadline_ns_) {
      time_out();
      break;
    }
    start_connects();
    const int n = epoll_wait(epoll_.get(), evs, 256, wait_ms(now_ns()));
    if (n < 0 && errno != EINTR) {
      errors_.add(std::string("epoll_wait: ") + std::strerror(errno));
      break;
    }
    // The first fault ends the run: the rest of the batch would only repeat it.
    for (int i = 0; i < n && errors_.count() == 0; ++i) {
      if (evs[i].data.u64 == kCommandsKey)
        read_commands();
      else
        on_event(evs[i].data.u64, evs[i].events);
    }
    fire_timers(now_ns());
    if (storm_at_ns_ != 0 && now_ns() >= storm_at_ns_) vanish_storm();
    if (!advance()) break;
  }
  report("result " + result_json());
  return errors_.count() == 0 ? 0 : 1;
}

}  // namespace zipper::loadgen
