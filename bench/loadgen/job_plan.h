// The jobs of a run as every process knows them, made by the coordinator
// before it forks the workers: each job's id and secret (fresh from the
// CSPRNG, so that jobs of one run never share an id), its group, and which
// worker serves its ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../proto/auth.h"
#include "options.h"

namespace zipper::loadgen {

struct JobPlan {
  std::size_t group = 0;  // index into Options::jobs; jobs.size() for churn
  const JobSpec* spec = nullptr;
  bool churn = false;
  bool vanish = false;  // churn: its ranks leave without BYE
  std::uint64_t id = 0;
  proto::auth::Secret secret{};
  // Steady jobs are spread: rank r lives in worker r % procs. A churn job
  // lives in one worker, which starts and ends it on its own.
  int worker = -1;
  /// Whether worker `w` of `procs` serves rank `vrank`.
  bool serves(int w, int procs, std::uint32_t vrank) const {
    return worker >= 0 ? worker == w : static_cast<int>(vrank % procs) == w;
  }
};

/// Workers that run churn jobs (the first ones), and how many churn jobs
/// worker `worker` runs at once: together --churn's concurrent.
std::uint32_t churn_worker_count(const Options& o);
std::uint32_t churn_concurrency(const Options& o, int worker);

/// Steady jobs first (group by group), then the churn jobs (every
/// 1/vanish-th of them vanishes, spread evenly). Throws std::runtime_error
/// when libsodium cannot start.
std::vector<JobPlan> make_plans(const Options& o);

}  // namespace zipper::loadgen
