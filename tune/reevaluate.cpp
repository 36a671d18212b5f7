// zipper-tune --reevaluate (reevaluate.h).
#include "reevaluate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <vector>

#include "library_table.h"
#include "plan.h"
#include "report_json.h"

namespace zipper::tune {

using nlohmann::json;

// --reevaluate: the models of this build on a stored report's measured
// candidates, with the report's own parameters or those of another run
// (--links-from: a measurement not taken with these candidates). No MPI.
int reevaluate(const std::string& path, const std::string& links_from, const std::string& out) {
  json rep, lrep;
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open it");
    rep = json::parse(in);
    if (!links_from.empty()) {
      std::ifstream lin(links_from);
      if (!lin) throw std::runtime_error("cannot open " + links_from);
      lrep = json::parse(lin);
    }
    const Network net = network_from_report(links_from.empty() ? rep : lrep);
    const int x = rep.at("layout").at("x"), y = rep.at("layout").at("y");
    const auto segs = segment_grid(rep.at("mode") == "quick");
    std::map<std::string, std::vector<double>> by_family;
    for (auto& p : rep.at("points")) {
      const std::string cname = p.at("collective");
      const coll::Collective c = *coll::collective_named(cname);
      const std::uint64_t bytes = p.at("bytes");
      for (auto& k : p.at("candidates")) {
        const Config cf = config_from_json(k.at("config"), c);
        const double pred = predict(net, c, cf.algorithm, bytes, x, y, cf.n, cf.segment);
        const double meas = k.at("measured_us");
        k["predicted_us"] = pred;
        if (meas > 0)
          by_family[cname + " " + std::string(coll::name_of(cf.algorithm))].push_back(
              (pred - meas) / meas);
      }
      // The pick over the point's full grid, as search_point ranks it.
      const SearchSpace space = point_space(library_algorithms(cname), c, bytes, x, y, segs);
      std::optional<Config> pick;
      double pick_pred = 0;
      for (const Config& cf : full_grid(space)) {
        const double t = predict(net, c, cf.algorithm, bytes, x, y, cf.n, cf.segment);
        if (!pick || t < pick_pred) {
          pick = cf;
          pick_pred = t;
        }
      }
      if (!pick) continue;
      p["model_pick"] = config_json(*pick);
      p["model_pick_us"] = -1;
      for (const auto& k : p.at("candidates"))
        if (config_from_json(k.at("config"), c) == *pick) p["model_pick_us"] = k.at("measured_us");
    }
    std::printf("zipper-tune: --reevaluate %s with the parameters of %s\n", path.c_str(),
                links_from.empty() ? path.c_str() : links_from.c_str());
    for (auto& [family, errs] : by_family) {
      std::sort(errs.begin(), errs.end());
      std::printf("zipper-tune:   %-24s %3zu candidates, median signed error %+6.1f %%\n",
                  family.c_str(), errs.size(), 100 * errs[errs.size() / 2]);
    }
    const RunFigures f = run_figures(outcomes_of(rep.at("points")));
    print_figures(f);
    if (!out.empty()) {
      rep["figures"] = figures_json(f);
      rep["model_median_relative_error"] = f.median_error;
      rep["reevaluated_with"] = links_from.empty() ? path : links_from;
      std::ofstream o(out);
      o << rep.dump(1) << "\n";
      if (!o) throw std::runtime_error("cannot write " + out);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipper-tune: --reevaluate: cannot use %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  return 0;
}

}  // namespace zipper::tune
