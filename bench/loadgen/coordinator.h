// The coordinating process of zipper-loadgen: makes the job plans, forks the
// workers, leads them through the phases (worker.h), measures each zipperd
// at the phase boundaries (/proc and /metrics), adds up the workers'
// results and checks zipperd's counters against what the workers sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "job_plan.h"
#include "options.h"
#include "run_stats.h"
#include "zipperd_probe.h"

namespace zipper::loadgen {

/// One zipperd measured at the run's phase boundaries: before the first
/// connection (base), every steady rank admitted (admitted), the traffic
/// done (traffic), everything closed (end).
struct ZipperdSamples {
  std::optional<ProcSample> base, admitted, traffic, end;
  std::optional<MetricsText> m_base, m_admitted, m_traffic, m_end;
};

/// One comparison of a zipperd counter (or a total) with what was sent.
struct CounterCheck {
  int zipperd = -1;  // -1: the run's own totals
  std::string what;
  double expected = 0, got = 0;
  bool ok() const { return expected == got; }
};

struct RunResult {
  std::vector<std::string> errors;
  std::uint64_t error_count = 0;
  std::vector<GroupStats> groups;  // Options::jobs, then churn
  std::vector<JobTimes> jobs;      // by plan index
  std::vector<ZipperdSamples> zipperds;
  std::vector<CounterCheck> checks;
  bool counters_checked = false;
  double loadgen_cpu_s = 0;                                            // all workers
  std::uint64_t t_start = 0, t_go = 0, t_traffic_done = 0, t_end = 0;  // ns
  bool ok() const {
    if (error_count) return false;
    for (const auto& c : checks)
      if (!c.ok()) return false;
    return true;
  }
};

/// Runs the whole load; never throws for a fault of the run (those land in
/// RunResult::errors), only for a fault of this host (fork, pipe).
RunResult run_load(const Options& o, const std::vector<JobPlan>& plans);

/// Messages the run's jobs of group `g` exchange in all (pairs x messages x jobs).
std::uint64_t expected_messages(const Options& o, const std::vector<JobPlan>& plans, std::size_t g);

}  // namespace zipper::loadgen
