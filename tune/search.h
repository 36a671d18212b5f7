// The search over algorithm, n and segment size for one collective and
// message size: rank the full grid by the model, confirm the best few by
// experiment, then a modified hill-descent over n and segment size from the
// best measured one (Vadhiyar, Fagg, Dongarra, "Automatically tuned
// collective communications", SC 2000, §4: start from the previous size's
// optimum, move to a better neighbour until none is). Pure: the experiment
// is a callback, so the search is unit-tested without MPI.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "../collectives/selection.h"

namespace zipper::tune {

/// One point of the search space.
struct Config {
  coll::Algorithm algorithm = coll::Algorithm::kTwoLevel;
  int n = 0;                  // senders (0 for algorithms that take none)
  std::uint64_t segment = 0;  // bytes (0 = unsegmented)
  bool operator==(const Config&) const = default;
};

struct Candidate {
  Config config;
  double predicted_us = 0;
  double measured_us = -1;  // < 0: not measured
};

struct SearchSpace {
  std::vector<coll::AlgorithmTraits> algorithms;  // of this collective
  int max_senders = 1;                            // min(x, y)
  std::vector<std::uint64_t> segments;            // ascending, 0 first (unsegmented)
};

/// Every configuration of the space (algorithms × n × segment, each only
/// along the parameters it takes): the full grid of one point.
std::vector<Config> full_grid(const SearchSpace& space);

struct SearchResult {
  std::vector<Candidate> candidates;  // the whole grid with predictions; measured ones marked
  Config model_pick;                  // the model's best
  Config best;                        // the best measured
  double best_us = 0;
  int experiments = 0;  // configurations measured
};

/// Searches one point. `predict` gives µs for a configuration, `measure`
/// runs it and returns µs. `confirm`: how many of the model's best
/// configurations (of distinct algorithms first) are measured before the
/// hill-descent; `hint`: the previous size's optimum, measured too when it
/// is in the space; `max_experiments` bounds the measurements of the point;
/// `prune` > 0 leaves out of step 1 every candidate the model predicts more
/// than `prune` times slower than its best (the model's pruning, Vadhiyar et
/// al. §4; the hill-descent may still reach it).
SearchResult search_point(const SearchSpace& space,
                          const std::function<double(const Config&)>& predict,
                          const std::function<double(const Config&)>& measure, int confirm,
                          const Config* hint, int max_experiments, double prune = 0);

}  // namespace zipper::tune
