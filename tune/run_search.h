// Step 3 of a zipper-tune run: at every point (collective, size), the
// model's best candidates confirmed by experiment with a hill-descent over n
// and segment size (Vadhiyar et al.), against the library's built-in choice,
// which stays unless beaten by more than --margin. Collective: every rank
// runs the same deterministic plan.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "models.h"
#include "options.h"
#include "tuning_file.h"

namespace zipper::tune {

struct SearchRun {
  nlohmann::json points = nlohmann::json::array();  // the report's points
  std::vector<TunedPoint> tuned;                    // what the tuning file says
  long experiments = 0;                             // candidates measured by the search
  long reference_experiments = 0;                   // built-in choices measured, and verification
  long grid_total = 0;                              // candidates of the full grids
};

/// Searches every point of o.collectives on layout x+y; rank 0 prints a
/// line per point. Leaves every collective on the library's built-in choice.
SearchRun search_all(const Options& o, const Network& net, int rank, int x, int y);

}  // namespace zipper::tune
