// The figures the tuning targets (docs/tuning.md) ask of a tuning run,
// computed from the per-point outcomes (predicted and measured µs per candidate, the model's
// pick, the measured best, the tuned and built-in times). Pure: no MPI and
// no JSON, unit-tested; zipper-tune prints them and writes them to the
// report, live and with --reevaluate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zipper::tune {

/// What one (collective, size) point of a run gave. Times in µs; a
/// negative time means "not measured".
struct PointOutcome {
  std::string collective;
  std::uint64_t bytes = 0;
  std::vector<double> predicted, measured;  // per measured candidate, same order
  bool pick_is_best = true;                 // the model's pick is the measured best configuration
  double model_pick_us = -1;
  double best_us = -1;
  double tuned_us = -1, builtin_us = -1;
};

struct CollectiveFigures {
  std::string collective;
  int points = 0;
  double speedup_geomean = 1;     // geometric mean of builtin / tuned
  double worst_tuned_ratio = 0;   // largest tuned / builtin of any point
  std::uint64_t worst_bytes = 0;  // where it is
};

struct RunFigures {
  // Model accuracy: median of |predicted - measured| / measured over every
  // measured candidate (and the median of the signed error, < 0 when the
  // model predicts too little).
  double median_error = 0, median_signed_error = 0;
  int errors = 0;
  // Points whose model pick is not the measured best: how many, how many
  // picks are within 10 % of the best (ratio pick / best <= 1.1), the worst
  // ratio, and how many picks were not measured at all.
  int picks_differ = 0, picks_within_10 = 0, picks_unmeasured = 0;
  double worst_pick_ratio = 1;
  // Tuned against built-in, per collective, in the order first seen.
  std::vector<CollectiveFigures> per_collective;
  double worst_tuned_ratio = 0;
};

/// Computes the figures; `within` is the tolerance of the pick (0.1 = 10 %).
RunFigures run_figures(const std::vector<PointOutcome>& points, double within = 0.1);

}  // namespace zipper::tune
