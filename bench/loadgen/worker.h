// One worker process of zipper-loadgen: a single-threaded epoll loop over the
// channels of its virtual ranks (rank r of each steady job when r % procs is
// its index, and the churn jobs given to it), led through the run's phases
// by the coordinator over a pair of pipes:
//
//   worker -> "ready"         every steady rank here saw JOB_READY
//   coord  -> "go"            start the steady traffic (and the churn)
//   worker -> "traffic-done"  everything sent and received here, churn ended
//   coord  -> "close"         steady ranks say BYE
//   worker -> "result JSON"   what it measured and the faults it found; last line
//
// A fault or the deadline ends the worker at once with its result.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../../proto/unique_fd.h"
#include "job_plan.h"
#include "options.h"
#include "run_errors.h"
#include "run_stats.h"

namespace zipper::loadgen {

class VirtualJob;
class VirtualRank;

class Worker {
 public:
  Worker(const Options& o, const std::vector<JobPlan>& plans, int index, proto::UniqueFd commands,
         proto::UniqueFd reports);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Runs to the end; returns the exit status (0: no fault).
  int run();

 private:
  enum class Phase { kAdmit, kAwaitGo, kTraffic, kAwaitClose, kClosing };

  void add_rank(VirtualJob& job, std::uint32_t vrank);
  void start_connects();
  void on_event(std::uint64_t key, std::uint32_t events);
  /// Updates the tallies of `r`'s job after its state may have changed, and
  /// lets it send.
  void touch(VirtualRank& r);
  void schedule(VirtualRank& r, std::uint64_t due);
  void fire_timers(std::uint64_t now);
  void start_traffic(VirtualJob& job);
  void step_churn();
  void end_churn_job(VirtualJob& job);
  /// The storm jobs' ranks here all vanish without BYE (--storm).
  void vanish_storm();
  void read_commands();
  /// False once the run is over (closed, or a fault).
  bool advance();
  void time_out();
  void report(const std::string& line);
  std::string result_json() const;
  int wait_ms(std::uint64_t now) const;
  const char* phase_name() const;

  const Options& o_;
  const std::vector<JobPlan>& plans_;
  const int index_;
  proto::UniqueFd commands_, reports_, epoll_;
  std::string command_buf_;
  Phase phase_ = Phase::kAdmit;
  std::uint64_t deadline_ns_ = 0;
  RunErrors errors_;
  std::vector<GroupStats> groups_;                          // Options::jobs, then churn
  std::vector<std::pair<std::size_t, JobTimes>> finished_;  // (plan index, times) of churn jobs
  std::vector<std::unique_ptr<VirtualJob>> steady_, churn_;
  std::deque<std::size_t> churn_queue_;                    // plan indices not started yet
  std::uint32_t churn_slots_ = 0;                          // churn jobs at once here
  std::unordered_map<std::uint64_t, VirtualRank*> ranks_;  // by id
  std::uint64_t next_id_ = 1;
  std::deque<std::pair<std::uint64_t, int>> connect_queue_;  // (rank id, rail)
  int connecting_ = 0, window_ = 1;
  std::uint32_t steady_ranks_ = 0;
  std::uint64_t storm_at_ns_ = 0;  // when the storm jobs vanish (0: none pending)
  // Rate timers: (due ns, rank id), earliest first; stale entries are skipped.
  std::priority_queue<std::pair<std::uint64_t, std::uint64_t>,
                      std::vector<std::pair<std::uint64_t, std::uint64_t>>, std::greater<>>
      timers_;
};

}  // namespace zipper::loadgen
