// zipper-tune's command line (options.h), with CLI11.
#include "options.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "../collectives/selection.h"

namespace zipper::tune {

std::optional<int> parse_options(int argc, char** argv, Options& o) {
  CLI::App app{
      "zipper-tune: measure LogGP, model the collectives (pLogP), confirm by "
      "experiment, write the tuning file (docs/tuning.md)"};
  app.add_flag("--quick", o.quick, "few sizes, small grid: a few minutes on the emulation");
  app.add_option("--tuning-out", o.tuning_out, "tuning file to write (TOML)")
      ->type_name("PATH")
      ->capture_default_str();
  app.add_option("--report", o.report,
                 "JSON report to write (with --reevaluate: the re-predicted report)")
      ->type_name("PATH")
      ->capture_default_str();
  app.add_option("--collectives", o.collectives, "collectives to tune, comma-separated")
      ->delimiter(',')
      ->type_name("NAME,...")
      ->capture_default_str();
  app.add_option("--max-bytes", o.max_bytes,
                 "largest message size, bytes (bcast, reduce, allreduce)")
      ->type_name("BYTES")
      ->capture_default_str();
  app.add_option("--max-block", o.max_block, "largest alltoall(v) block, bytes")
      ->type_name("BYTES")
      ->capture_default_str();
  app.add_option("--budget-ms", o.budget_ms,
                 "time per experiment, milliseconds (default: 20, with --quick 5)")
      ->type_name("MS");
  app.add_option("--confirm", o.confirm,
                 "model candidates measured per point (default: 3, with --quick 2)")
      ->type_name("N");
  app.add_option("--prune", o.prune,
                 "measure no candidate the model predicts more than this many times slower "
                 "than its best (0: none)")
      ->type_name("RATIO")
      ->capture_default_str();
  app.add_option("--margin", o.margin,
                 "keep the built-in choice unless the search's best is faster by more than this "
                 "fraction")
      ->type_name("FRACTION")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  app.add_flag("--measure-only", o.measure_only, "only the LogGP measurement");
  app.add_flag("--list-algorithms", o.list, "print the library's algorithms as JSON and exit");
  app.add_option("--reevaluate", o.reevaluate,
                 "REPORT: the models of this build on REPORT's measured candidates; prints the "
                 "figures (no MPI)")
      ->type_name("PATH");
  app.add_option("--links-from", o.links_from,
                 "with --reevaluate: take the parameters from this report instead")
      ->type_name("PATH");
  app.add_option("--check", o.check,
                 "REPORT: exit 0 iff the tuning file in MMPI_TUNING_FILE gives its choices")
      ->type_name("PATH");
  app.set_version_flag("--version", std::string("zipper-tune ") + ZIPPER_VERSION);
  app.footer(
      "Exit status: 0 done, 1 failure while running (a measurement, a file that cannot be "
      "written, --check finding a different choice), 2 usage or unreadable input.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.report_given = app.count("--report") > 0;
  for (const auto& c : o.collectives)
    if (!coll::collective_named(c)) {
      std::fprintf(stderr, "zipper-tune: unknown collective '%s'\n", c.c_str());
      return 2;
    }
  return std::nullopt;
}

void set_defaults(Options& o) {
  if (o.budget_ms <= 0) o.budget_ms = o.quick ? 5 : 20;
  if (o.confirm <= 0) o.confirm = o.quick ? 2 : 3;
}

}  // namespace zipper::tune
