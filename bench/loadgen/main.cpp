// zipper-loadgen: virtual ranks of one or many jobs through zipperd, every
// message checked (options.cpp has the description; coordinator.h the run).
#include <cstdio>
#include <exception>

#include "coordinator.h"
#include "job_plan.h"
#include "options.h"
#include "report.h"

int main(int argc, char** argv) {
  using namespace zipper::loadgen;
  const Options o = parse_options(argc, argv);
  try {
    const auto plans = make_plans(o);
    const RunResult r = run_load(o, plans);
    const auto rep = report_json(o, plans, r);
    for (const auto& e : r.errors) std::fprintf(stderr, "zipper-loadgen: %s\n", e.c_str());
    if (r.error_count > r.errors.size())
      std::fprintf(stderr, "zipper-loadgen: ... and %llu more faults\n",
                   static_cast<unsigned long long>(r.error_count - r.errors.size()));
    for (const auto& c : r.checks)
      if (!c.ok())
        std::fprintf(stderr, "zipper-loadgen: check failed: %s%s: expected %.0f, got %.0f\n",
                     c.zipperd >= 0 ? ("zipperd " + std::to_string(c.zipperd) + ": ").c_str() : "",
                     c.what.c_str(), c.expected, c.got);
    const std::string out = o.format == "csv" ? report_csv(rep) : rep.dump() + "\n";
    std::fputs(out.c_str(), stdout);
    return r.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipper-loadgen: %s\n", e.what());
    return 1;
  }
}
