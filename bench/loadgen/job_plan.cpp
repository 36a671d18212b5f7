#include "job_plan.h"

#include <algorithm>
#include <cmath>

namespace zipper::loadgen {

std::uint32_t churn_worker_count(const Options& o) {
  return std::min(static_cast<std::uint32_t>(o.procs), o.churn.concurrent);
}

std::uint32_t churn_concurrency(const Options& o, int worker) {
  const std::uint32_t m = churn_worker_count(o), w = static_cast<std::uint32_t>(worker);
  if (w >= m) return 0;
  return o.churn.concurrent / m + (w < o.churn.concurrent % m ? 1 : 0);
}

std::vector<JobPlan> make_plans(const Options& o) {
  proto::auth::init();
  std::vector<JobPlan> plans;
  const auto add = [&](std::size_t group, const JobSpec* spec, bool churn) {
    JobPlan p;
    p.group = group;
    p.spec = spec;
    p.churn = churn;
    p.secret = proto::auth::random_secret();
    p.id = proto::auth::job_id_from_secret(p.secret);
    plans.push_back(p);
    return &plans.back();
  };
  for (std::size_t g = 0; g < o.jobs.size(); ++g)
    for (std::uint32_t i = 0; i < o.jobs[g].count; ++i) {
      JobPlan* p = add(g, &o.jobs[g], false);
      // A storm job lives in the last worker alone: closing thousands of
      // sockets there must not stall the loop that serves the steady ranks
      // whose latency shows the storm's cost in zipperd.
      if (o.jobs[g].vanish_after_s >= 0 && o.procs >= 2) p->worker = o.procs - 1;
    }
  // Churn jobs go round robin to as many workers as may run one at once.
  const std::uint32_t churn_workers = churn_worker_count(o);
  for (std::uint32_t i = 0; i < o.churn.jobs; ++i) {
    JobPlan* p = add(o.jobs.size(), &o.churn.job, true);
    p->worker = static_cast<int>(i % churn_workers);
    // Job i vanishes when the count of vanishing jobs among 0..i grows.
    p->vanish = std::floor((i + 1) * o.churn.vanish) > std::floor(i * o.churn.vanish);
  }
  return plans;
}

}  // namespace zipper::loadgen
