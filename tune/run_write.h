// Step 4 of a zipper-tune run: rank 0 writes the tuning file (TOML, what
// libmmpi reads through MMPI_TUNING_FILE) and the JSON report, and prints
// the run's summary.
#pragma once

#include <nlohmann/json.hpp>

#include "metrics.h"
#include "models.h"
#include "options.h"
#include "run_search.h"

namespace zipper::tune {

/// Writes o.tuning_out (unless --measure-only) and o.report on rank 0.
/// Times are MMPI_Wtime() seconds at the start, after measuring, at the end.
/// Returns 0, or 1 when a file cannot be written (named on stderr).
int write_outputs(const Options& o, const nlohmann::json& report, const SearchRun& run,
                  const RunFigures& figures, const Network& net, int rank, int x, int y,
                  double t_start, double t_measured, double t_end);

}  // namespace zipper::tune
