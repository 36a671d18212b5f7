// Step 2 of a zipper-tune run: the model (pLogP, models.h) fitted to the
// measured links predicts every algorithm, n and size, for plots
// (zipper-bench coll draws them as lines).
#pragma once

#include <nlohmann/json.hpp>

#include "models.h"
#include "options.h"

namespace zipper::tune {

/// [{collective, algorithm, n, bytes, predicted_us}] over o.collectives, for
/// n from 1 to `smax` where the algorithm takes senders (unsegmented).
nlohmann::json predictions_json(const Network& net, const Options& o, int x, int y, int smax);

}  // namespace zipper::tune
