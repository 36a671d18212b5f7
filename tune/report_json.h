// zipper-tune's JSON report (docs/tuning.md): the measured links, the
// contention figures, search configurations and the run's figures, to JSON
// and back (for --reevaluate). Readers throw nlohmann::json errors on a
// report that lacks a field.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "loggp.h"
#include "metrics.h"
#include "models.h"
#include "search.h"

namespace zipper::tune {

nlohmann::json link_json(const LinkParams& p, const std::vector<Threshold>& th);
nlohmann::json config_json(const Config& c);
nlohmann::json contention_json(const Network& net);
nlohmann::json figures_json(const RunFigures& f);
LinkParams link_from_json(const nlohmann::json& j);
/// The model's inputs as a report stored them.
Network network_from_report(const nlohmann::json& rep);
Config config_from_json(const nlohmann::json& j, coll::Collective c);
/// The report's points as metrics.h outcomes.
std::vector<PointOutcome> outcomes_of(const nlohmann::json& points);
/// Prints the run's figures (stdout), one line per collective and the model's.
void print_figures(const RunFigures& f);

}  // namespace zipper::tune
