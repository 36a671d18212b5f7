// Step 4 of a zipper-tune run: write (run_write.h).
#include "run_write.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "report_json.h"
#include "tuning_file.h"

namespace zipper::tune {

int write_outputs(const Options& o, const nlohmann::json& report, const SearchRun& run,
                  const RunFigures& figures, const Network& net, int rank, int x, int y,
                  double t_start, double t_measured, double t_end) {
  int rc = 0;
  if (rank == 0) {
    if (!o.measure_only) {
      std::ostringstream when;
      when << "layout " << x << "+" << y << ", " << (o.quick ? "quick" : "full") << " mode, "
           << run.experiments << " run.experiments of a " << run.grid_total << "-point grid";
      const std::string toml = tuning_toml(
          run.tuned, x, y,
          {"written by zipper-tune (docs/tuning.md); MMPI_TUNING_FILE=<this file>", when.str()});
      std::ofstream f(o.tuning_out);
      f << toml;
      if (!f) {
        std::fprintf(stderr, "zipper-tune: cannot write %s\n", o.tuning_out.c_str());
        rc = 1;
      }
      print_figures(figures);
      std::printf(
          "zipper-tune: %ld run.experiments (+%ld built-in references and verification) instead of "
          "%ld "
          "(full "
          "grid): %.1fx fewer\n",
          run.experiments, run.reference_experiments, run.grid_total,
          run.experiments ? double(run.grid_total) / run.experiments : 0.0);
    }
    std::printf(
        "zipper-tune: forwarded G = %.5f us/B = %.0f Mbit/s; measuring %.1f s, search "
        "%.1f s\n",
        net.forwarded.G, net.forwarded.G > 0 ? 8 / net.forwarded.G : 0.0, t_measured - t_start,
        t_end - t_measured);
    std::ofstream r(o.report);
    r << report.dump(1) << "\n";
    if (!r) {
      std::fprintf(stderr, "zipper-tune: cannot write %s\n", o.report.c_str());
      rc = 1;
    }
    if (rc == 0)
      std::printf("zipper-tune: wrote %s%s%s\n", o.measure_only ? "" : o.tuning_out.c_str(),
                  o.measure_only ? "" : " and ", o.report.c_str());
  }
  return rc;
}

}  // namespace zipper::tune
