// zipper-tune: measures the links of a running zipper job (LogGP/pLogP by
// PRTT, Hoefler et al.), models every collective algorithm on them (pLogP,
// models.h), confirms the model's best candidates by experiment with a
// hill-descent over n and segment size (Vadhiyar et al.) and writes the
// tuning file libmmpi reads plus a JSON report. One MMPI job, launched with
// zipper-run (docs/tuning.md); every rank runs the same deterministic plan.
#include <mmpi.h>

#include <cstdio>
#include <cstdlib>

#include "check_report.h"
#include "library_table.h"
#include "metrics.h"
#include "options.h"
#include "reevaluate.h"
#include "report_json.h"
#include "run_fit.h"
#include "run_measure.h"
#include "run_search.h"
#include "run_write.h"

using namespace zipper::tune;

// The run in four steps, one file each: measure (run_measure), fit the model
// (run_fit), search (run_search), write (run_write).
int main(int argc, char** argv) {
  Options o;
  if (const auto rc = parse_options(argc, argv, o)) return *rc;
  if (o.list) {
    std::printf("%s\n", list_algorithms(o.collectives).dump(1).c_str());
    return 0;
  }
  if (!o.reevaluate.empty())
    return reevaluate(o.reevaluate, o.links_from, o.report_given ? o.report : "");
  set_defaults(o);

  if (MMPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = 0, size = 1;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  if (!o.check.empty()) {
    const int rc = check_report(o.check, rank);
    MMPI_Finalize();
    return rc;
  }
  // The layout as libmmpi read it at MMPI_Init.
  int x = size, y = 0, forwarders = 0;
  MMPIX_Layout(&x, &y, &forwarders);
  if (y < 1) {
    if (rank == 0) std::fprintf(stderr, "zipper-tune: needs ranks in both clusters (zipper-run)\n");
    MMPI_Finalize();
    return 2;
  }
  if (std::getenv("MMPI_TUNING_FILE") && rank == 0)
    std::fprintf(stderr,
                 "zipper-tune: note: MMPI_TUNING_FILE is set; 'built-in' below means "
                 "the rules it gives\n");
  const double t_start = MMPI_Wtime();

  const Measurement m = measure_network(o, rank, x, y, forwarders);
  const double t_measured = MMPI_Wtime();
  nlohmann::json report = measurement_report(m, o, x, y, t_measured - t_start);
  if (rank == 0) print_measurement(m, x, y, t_measured - t_start);

  report["predictions"] = predictions_json(m.net, o, x, y, m.smax);

  SearchRun run;
  if (!o.measure_only) run = search_all(o, m.net, rank, x, y);
  const double t_end = MMPI_Wtime();
  report["points"] = run.points;
  const RunFigures figures = run_figures(outcomes_of(run.points));
  report["figures"] = figures_json(figures);
  report["model_median_relative_error"] = figures.median_error;
  report["experiments"] = {{"search", run.experiments},
                           {"builtin_reference", run.reference_experiments},
                           {"full_grid", run.grid_total}};
  report["search_seconds"] = t_end - t_measured;
  report["total_seconds"] = t_end - t_start;

  const int rc =
      write_outputs(o, report, run, figures, m.net, rank, x, y, t_start, t_measured, t_end);
  MMPI_Finalize();
  return rc;
}
