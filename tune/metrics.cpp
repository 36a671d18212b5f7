#include "metrics.h"

#include <algorithm>
#include <cmath>

namespace zipper::tune {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace

RunFigures run_figures(const std::vector<PointOutcome>& points, double within) {
  RunFigures f;
  std::vector<double> abs_err, signed_err;
  std::vector<double> log_sum;
  for (const PointOutcome& p : points) {
    for (std::size_t i = 0; i < p.measured.size() && i < p.predicted.size(); ++i) {
      if (p.measured[i] <= 0) continue;
      const double e = (p.predicted[i] - p.measured[i]) / p.measured[i];
      abs_err.push_back(std::fabs(e));
      signed_err.push_back(e);
    }
    if (!p.pick_is_best) {
      ++f.picks_differ;
      if (p.model_pick_us <= 0 || p.best_us <= 0) {
        ++f.picks_unmeasured;
      } else {
        const double r = p.model_pick_us / p.best_us;
        f.worst_pick_ratio = std::max(f.worst_pick_ratio, r);
        if (r <= 1 + within) ++f.picks_within_10;
      }
    }
    if (p.tuned_us <= 0 || p.builtin_us <= 0) continue;
    auto it =
        std::find_if(f.per_collective.begin(), f.per_collective.end(),
                     [&](const CollectiveFigures& c) { return c.collective == p.collective; });
    if (it == f.per_collective.end()) {
      f.per_collective.push_back({p.collective});
      log_sum.push_back(0);
      it = f.per_collective.end() - 1;
    }
    const std::size_t k = static_cast<std::size_t>(it - f.per_collective.begin());
    const double ratio = p.tuned_us / p.builtin_us;
    log_sum[k] += std::log(p.builtin_us / p.tuned_us);
    ++it->points;
    if (ratio > it->worst_tuned_ratio) {
      it->worst_tuned_ratio = ratio;
      it->worst_bytes = p.bytes;
    }
    f.worst_tuned_ratio = std::max(f.worst_tuned_ratio, ratio);
  }
  for (std::size_t k = 0; k < f.per_collective.size(); ++k)
    f.per_collective[k].speedup_geomean = std::exp(log_sum[k] / f.per_collective[k].points);
  f.errors = static_cast<int>(abs_err.size());
  f.median_error = median(abs_err);
  f.median_signed_error = median(signed_err);
  return f;
}

}  // namespace zipper::tune
