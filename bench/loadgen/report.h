// zipper-loadgen's output: the run's result as one JSON object, or as CSV
// (a header and one row per group), with the figures derived from the
// samples (latency percentiles, throughput, admission and departure times,
// zipperd's memory per admitted rank and CPU per relayed frame).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "coordinator.h"

namespace zipper::loadgen {

/// Units in the names: _us, _ms, _s, _kib, _b (bytes), _mb_s (10^6 B/s).
nlohmann::json report_json(const Options& o, const std::vector<JobPlan>& plans, const RunResult& r);
/// The CSV form of report_json's groups, zipperd's figures averaged over
/// the zipperds; ends with a newline.
std::string report_csv(const nlohmann::json& report);

}  // namespace zipper::loadgen
