// zipper-tune's command line: what to tune, how long each experiment runs,
// the modes (--list-algorithms, --reevaluate, --check, --measure-only).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zipper::tune {

struct Options {
  bool quick = false, measure_only = false, list = false;
  std::string tuning_out = "zipper-tuning.toml", report = "zipper-tune.json", check, reevaluate,
              links_from;
  std::vector<std::string> collectives = {"barrier",   "bcast",    "reduce",
                                          "allreduce", "alltoall", "alltoallv"};
  std::uint64_t max_bytes = 4u << 20, max_block = 1u << 20;  // bytes
  double budget_ms = 0;  // per experiment; 0: 20, with --quick 5 (set_defaults)
  int confirm = 0;       // model candidates measured per point; 0: 3, with --quick 2
  double prune = 4;      // ratio to the model's best beyond which nothing is measured
  double margin = 0.05;  // fraction the search's best must win by over the built-in choice
  /// Whether --report was given (with --reevaluate it names the output).
  bool report_given = false;
};

/// Parses the command line into `o`. A value: exit now with it (0 after
/// --help or --version, 2 for a usage error or an unknown collective, with
/// the message printed). nullopt: go on.
std::optional<int> parse_options(int argc, char** argv, Options& o);

/// The defaults that depend on --quick (budget_ms, confirm).
void set_defaults(Options& o);

}  // namespace zipper::tune
