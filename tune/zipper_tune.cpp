// zipper-tune: measures the links of a running zipper job (LogGP/pLogP by
// PRTT, Hoefler et al.), models every collective algorithm on them (pLogP,
// models.h), confirms the model's best candidates by experiment with a
// hill-descent over n and segment size (Vadhiyar et al.) and writes the
// tuning file libmmpi reads plus a JSON report. One MMPI job, launched with
// zipper-run (docs/tuning.md); every rank runs the same deterministic plan.
#include <mmpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "measure.h"
#include "models.h"
#include "search.h"
#include "tuning_file.h"

using nlohmann::json;
using namespace zipper;
using namespace zipper::tune;

namespace {

struct Options {
  bool quick = false, measure_only = false, list = false;
  std::string tuning_out = "zipper-tuning.toml", report = "zipper-tune.json", check;
  std::vector<std::string> collectives = {"barrier",   "bcast",    "reduce",
                                          "allreduce", "alltoall", "alltoallv"};
  std::uint64_t max_bytes = 4u << 20, max_block = 1u << 20;
  double budget_ms = 0;
  int confirm = 0;
  double prune = 4;
};

// The library's algorithm table through MMPIX_Coll_algorithm (never a copy).
std::vector<coll::AlgorithmTraits> library_algorithms(const std::string& collective) {
  std::vector<coll::AlgorithmTraits> out;
  const char* name = nullptr;
  int n = 0, s = 0;
  for (int i = 0; MMPIX_Coll_algorithm(collective.c_str(), i, &name, &n, &s) == MPI_SUCCESS; ++i) {
    const auto c = coll::collective_named(collective);
    const auto a = c ? coll::algorithm_named(*c, name) : std::nullopt;
    if (a) out.push_back({*a, coll::name_of(*a), n != 0, s != 0});
  }
  return out;
}

json list_algorithms(const std::vector<std::string>& collectives) {
  json j = json::object();
  for (const auto& c : collectives) {
    json arr = json::array();
    const char* name = nullptr;
    int n = 0, s = 0;
    for (int i = 0; MMPIX_Coll_algorithm(c.c_str(), i, &name, &n, &s) == MPI_SUCCESS; ++i)
      arr.push_back({{"name", name}, {"takes_senders", n != 0}, {"takes_segment", s != 0}});
    j[c] = arr;
  }
  return j;
}

std::vector<std::uint64_t> geometric(std::uint64_t from, std::uint64_t to, unsigned factor) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = from; s <= to; s *= factor) v.push_back(s);
  return v;
}

json link_json(const LinkParams& p, const std::vector<Threshold>& th) {
  json pts = json::array();
  for (const auto& s : p.points)
    pts.push_back({{"bytes", s.bytes},
                   {"prtt1_us", s.rtt},
                   {"g_us", s.g},
                   {"o_s_us", s.o_s},
                   {"o_r_us", s.o_r}});
  json ths = json::array();
  for (const auto& t : th)
    ths.push_back({{"between_bytes", {t.below, t.above}}, {"jump_us", t.jump_us}});
  return {{"L_us", p.L},          {"g_us", p.g0},
          {"G_us_per_byte", p.G}, {"G_mbit_per_s", p.G > 0 ? 8.0 / p.G : 0.0},
          {"points", pts},        {"thresholds", ths}};
}

json config_json(const Config& c) {
  return {{"algorithm", std::string(coll::name_of(c.algorithm))},
          {"n", c.n},
          {"segment_bytes", c.segment}};
}

std::uint64_t env_u64(const char* var, std::uint64_t def) {
  const char* v = std::getenv(var);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

// --check: the tuning file in MMPI_TUNING_FILE must give every choice of the report.
int check_report(const std::string& path, int rank) {
  std::ifstream in(path);
  json rep;
  try {
    rep = json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipper-tune: --check: cannot read %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  int bad = 0, checked = 0;
  for (const auto& p : rep.at("points")) {
    const std::string c = p.at("collective");
    const auto& want = p.at("tuned");
    const char* alg = nullptr;
    int n = 0;
    MPI_Aint seg = 0;
    if (MMPIX_Coll_choice(c.c_str(), static_cast<MPI_Aint>(p.at("bytes").get<std::uint64_t>()),
                          &alg, &n, &seg) != MPI_SUCCESS)
      return 2;
    ++checked;
    const bool takes_n = want.at("n").get<int>() > 0;
    if (want.at("algorithm") != alg || (takes_n && want.at("n").get<int>() != n) ||
        want.at("segment_bytes").get<MPI_Aint>() != seg) {
      ++bad;
      if (rank == 0)
        std::fprintf(stderr,
                     "zipper-tune: --check: %s at %llu bytes: file gives %s n=%d seg=%lld, "
                     "report says %s\n",
                     c.c_str(), (unsigned long long)p.at("bytes").get<std::uint64_t>(), alg, n,
                     (long long)seg, want.dump().c_str());
    }
  }
  if (rank == 0)
    std::printf("zipper-tune: --check: %d of %d choices read back from the tuning file\n",
                checked - bad, checked);
  return bad == 0 && checked > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "zipper-tune: measure LogGP, model the collectives (pLogP), confirm by "
      "experiment, write the tuning file (docs/tuning.md)"};
  app.add_flag("--quick", o.quick, "few sizes, small grid: a few minutes on the emulation");
  app.add_option("--tuning-out", o.tuning_out, "tuning file to write (TOML)");
  app.add_option("--report", o.report, "JSON report to write");
  app.add_option("--collectives", o.collectives, "collectives to tune")->delimiter(',');
  app.add_option("--max-bytes", o.max_bytes, "largest message size (bcast, reduce, allreduce)");
  app.add_option("--max-block", o.max_block, "largest alltoall(v) block, bytes");
  app.add_option("--budget-ms", o.budget_ms, "time per experiment, ms (default 20, quick 5)");
  app.add_option("--confirm", o.confirm,
                 "model candidates measured per point (default 3, quick 2)");
  app.add_option("--prune", o.prune,
                 "measure no candidate the model predicts more than this many times slower "
                 "than its best (0: none; default 4)");
  app.add_flag("--measure-only", o.measure_only, "only the LogGP measurement");
  app.add_flag("--list-algorithms", o.list, "print the library's algorithms as JSON and exit");
  app.add_option("--check", o.check,
                 "REPORT: exit 0 iff the tuning file in MMPI_TUNING_FILE gives its choices");
  CLI11_PARSE(app, argc, argv);
  for (const auto& c : o.collectives)
    if (!coll::collective_named(c)) {
      std::fprintf(stderr, "zipper-tune: unknown collective '%s'\n", c.c_str());
      return 2;
    }
  if (o.list) {
    std::printf("%s\n", list_algorithms(o.collectives).dump(1).c_str());
    return 0;
  }
  if (o.budget_ms <= 0) o.budget_ms = o.quick ? 5 : 20;
  if (o.confirm <= 0) o.confirm = o.quick ? 2 : 3;

  if (MMPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = 0, size = 1;
  MMPI_Comm_rank(MMPI_COMM_WORLD, &rank);
  MMPI_Comm_size(MMPI_COMM_WORLD, &size);
  if (!o.check.empty()) {
    const int rc = check_report(o.check, rank);
    MMPI_Finalize();
    return rc;
  }
  const int x = static_cast<int>(env_u64("MMPI_NP_LOW", size)), y = size - x;
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

  // ---- 1. Measure (Hoefler et al. PRTT) ------------------------------------
  PrttPlan plan;
  plan.sizes = o.quick
                   ? std::vector<std::uint64_t>{1, 64, 1024, 16384, 65536, 262144, 1048576, 4194304}
                   : geometric(1, std::min<std::uint64_t>(o.max_bytes, 4u << 20), 2);
  plan.n = 8;
  plan.repeats = o.quick ? 3 : 5;
  Network net;
  std::vector<Threshold> th_low, th_high, th_fwd;
  auto measure_class = [&](int a, int b, std::vector<Threshold>* th) {
    const auto samples = measure_prtt(a, b, plan);
    LinkParams p = derive(samples, plan.n);
    *th = detect_thresholds(p.points);
    return p;
  };
  net.forwarded = measure_class(0, x, &th_fwd);
  net.low = x >= 2 ? measure_class(0, 1, &th_low) : net.forwarded;
  net.high = y >= 2 ? measure_class(x, x + 1, &th_high) : net.forwarded;
  const int smax = std::min(x, y);
  const std::uint64_t big = o.quick ? 262144 : 1048576;
  net.senders_measured = smax;
  if (smax > 1) {
    net.gamma_forwarded = measure_forwarded_contention(x, smax, big, 8);
  }
  {
    // [BM] γ: native all-to-all at 64 KiB blocks against the flat model.
    const std::uint64_t blk = 65536;
    const double t = time_native_alltoall(blk, 3);
    const LinkParams& mine = rank < x ? net.low : net.high;
    const int P = rank < x ? x : y;
    double gamma = 1;
    if (P > 1 && mine.g(blk) > 0) gamma = std::max(1.0, (t - mine.L) / ((P - 1) * mine.g(blk)));
    double out = 1;
    MMPI_Allreduce(&gamma, &out, 1, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD);
    net.gamma_alltoall = out;
  }
  net.op_us_per_byte = time_reduce_op();
  const double t_measured = MMPI_Wtime();

  json report;
  report["layout"] = {{"x", x}, {"y", y}};
  report["mode"] = o.quick ? "quick" : "full";
  report["links"] = {{"intra_low", link_json(net.low, th_low)},
                     {"intra_high", link_json(net.high, th_high)},
                     {"forwarded", link_json(net.forwarded, th_fwd)}};
  report["contention"] = {{"gamma_alltoall", net.gamma_alltoall},
                          {"gamma_forwarded", net.gamma_forwarded},
                          {"senders_measured", net.senders_measured},
                          {"op_us_per_byte", net.op_us_per_byte}};
  report["configured_thresholds_bytes"] = {
      {"zipper_eager_limit", env_u64("MMPI_EAGER_LIMIT", 16384)},
      {"zipper_chunk_size", env_u64("MMPI_CHUNK_SIZE", 131072)},
      {"openmpi_btl_tcp_eager_limit", env_u64("OMPI_MCA_btl_tcp_eager_limit", 65536)}};
  report["measure_seconds"] = t_measured - t_start;
  if (rank == 0) {
    auto line = [](const char* what, const LinkParams& p, const std::vector<Threshold>& th) {
      std::printf("zipper-tune: %-10s L=%.1f us  g=%.1f us  G=%.5f us/B (%.0f Mbit/s)", what, p.L,
                  p.g0, p.G, p.G > 0 ? 8.0 / p.G : 0.0);
      for (const auto& t : th)
        std::printf("  step %llu..%llu B (+%.0f us)", (unsigned long long)t.below,
                    (unsigned long long)t.above, t.jump_us);
      std::printf("\n");
    };
    line("intra-A", net.low, th_low);
    line("intra-B", net.high, th_high);
    line("forwarded", net.forwarded, th_fwd);
    std::printf(
        "zipper-tune: gamma alltoall %.2f, forwarded with %d senders %.2f; measuring took "
        "%.1f s\n",
        net.gamma_alltoall, smax, net.gamma_forwarded, t_measured - t_start);
    std::fflush(stdout);
  }

  // The model's prediction for every algorithm and n (unsegmented) over the
  // sizes, for plots (zipper-bench coll draws them as lines).
  {
    json pred = json::array();
    for (const auto& cname : o.collectives) {
      const coll::Collective c = *coll::collective_named(cname);
      const bool blocks = c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
      const auto sizes = c == coll::Collective::kBarrier
                             ? std::vector<std::uint64_t>{0}
                             : geometric(4, blocks ? o.max_block : o.max_bytes, 2);
      for (const auto& a : library_algorithms(cname))
        for (int n = a.takes_senders ? 1 : 0; n <= (a.takes_senders ? smax : 0); ++n)
          for (std::uint64_t b : sizes)
            pred.push_back({{"collective", cname},
                            {"algorithm", std::string(a.name)},
                            {"n", n},
                            {"bytes", b},
                            {"predicted_us", predict(net, c, a.algorithm, b, x, y, n, 0)}});
    }
    report["predictions"] = pred;
  }

  // ---- 2./3. Model and search ----------------------------------------------
  json points = json::array();
  std::vector<TunedPoint> tuned;
  long experiments = 0, reference_experiments = 0, grid_total = 0;
  std::vector<double> errors;
  json per_coll = json::object();
  if (!o.measure_only) {
    std::vector<std::uint64_t> segs = {0};
    for (std::uint64_t s = o.quick ? 65536 : 16384; s <= (o.quick ? 262144u : 1u << 20); s *= 4)
      segs.push_back(s);
    for (const auto& cname : o.collectives) {
      const coll::Collective c = *coll::collective_named(cname);
      SearchSpace space{library_algorithms(cname), smax, segs};
      std::vector<std::uint64_t> sizes;
      if (c == coll::Collective::kBarrier) {
        sizes = {0};
      } else {
        const bool blocks = c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
        const std::uint64_t top = blocks ? std::min(o.max_block, o.max_bytes) : o.max_bytes;
        sizes = o.quick ? std::vector<std::uint64_t>{8, 4096, 65536,
                                                     std::min<std::uint64_t>(top, 1u << 20)}
                        : geometric(8, top, 2);
      }
      std::optional<Config> prev;
      double log_ratio = 0;
      int count = 0;
      for (std::uint64_t bytes : sizes) {
        // A segment as large as the message is the unsegmented algorithm:
        // offer only smaller ones (alltoall: the aggregated message is ~x·y blocks).
        const bool blocks = c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
        const std::uint64_t moved = blocks ? bytes * std::uint64_t(x) * y : bytes;
        space.segments.clear();
        for (std::uint64_t s : segs)
          if (s < moved) space.segments.push_back(s);
        auto predict_fn = [&](const Config& k) {
          return predict(net, c, k.algorithm, bytes, x, y, k.n, k.segment);
        };
        auto measure_fn = [&](const Config& k) {
          return time_collective(c, k, false, bytes, o.budget_ms * 1000, 200);
        };
        const int cap = o.quick ? 6 : 12;
        SearchResult r = search_point(space, predict_fn, measure_fn, o.confirm,
                                      prev ? &*prev : nullptr, cap, o.prune);
        prev = r.best;
        experiments += r.experiments;
        grid_total += static_cast<long>(r.candidates.size());
        // The built-in rules' choice, measured as the library makes it.
        const char* alg = nullptr;
        int n = 0;
        MPI_Aint seg = 0;
        MMPIX_Coll_set(cname.c_str(), "", 0);
        MMPIX_Coll_set_segment(cname.c_str(), -1);
        MMPIX_Coll_choice(cname.c_str(), static_cast<MPI_Aint>(bytes), &alg, &n, &seg);
        Config builtin{*coll::algorithm_named(c, alg), 0, static_cast<std::uint64_t>(seg)};
        for (const auto& t : space.algorithms)
          if (t.algorithm == builtin.algorithm && t.takes_senders) builtin.n = n;
        double builtin_us = -1;
        for (const auto& k : r.candidates)
          if (k.config == builtin && k.measured_us >= 0) builtin_us = k.measured_us;
        if (builtin_us < 0) {
          builtin_us = time_collective(c, builtin, true, bytes, o.budget_ms * 1000, 200);
          ++reference_experiments;
        }
        // The tuned choice must not lose to the built-in one.
        Config chosen = r.best;
        double chosen_us = r.best_us;
        if (builtin_us < chosen_us) {
          chosen = builtin;
          chosen_us = builtin_us;
        }
        tuned.push_back({c, bytes, chosen});
        json cands = json::array();
        double model_pick_us = -1;
        for (const auto& k : r.candidates) {
          if (k.measured_us < 0) continue;
          cands.push_back({{"config", config_json(k.config)},
                           {"predicted_us", k.predicted_us},
                           {"measured_us", k.measured_us}});
          if (k.measured_us > 0)
            errors.push_back(std::fabs(k.predicted_us - k.measured_us) / k.measured_us);
          if (k.config == r.model_pick) model_pick_us = k.measured_us;
        }
        points.push_back({{"collective", cname},
                          {"bytes", bytes},
                          {"candidates", cands},
                          {"grid_size", r.candidates.size()},
                          {"experiments", r.experiments},
                          {"model_pick", config_json(r.model_pick)},
                          {"model_pick_us", model_pick_us},
                          {"measured_best", config_json(r.best)},
                          {"measured_best_us", r.best_us},
                          {"builtin", config_json(builtin)},
                          {"builtin_us", builtin_us},
                          {"tuned", config_json(chosen)},
                          {"tuned_us", chosen_us}});
        if (chosen_us > 0 && builtin_us > 0) {
          log_ratio += std::log(builtin_us / chosen_us);
          ++count;
        }
        if (rank == 0) {
          std::printf(
              "zipper-tune: %-9s %8llu B  tuned %-12s n=%d seg=%-7llu %10.1f us  built-in "
              "%-12s %10.1f us  (%d of %zu measured)\n",
              cname.c_str(), (unsigned long long)bytes,
              std::string(coll::name_of(chosen.algorithm)).c_str(), chosen.n,
              (unsigned long long)chosen.segment, chosen_us, alg, builtin_us, r.experiments,
              r.candidates.size());
          std::fflush(stdout);
        }
      }
      MMPIX_Coll_set(cname.c_str(), "", 0);
      MMPIX_Coll_set_segment(cname.c_str(), -1);
      per_coll[cname] = {{"speedup_vs_builtin_geomean", count ? std::exp(log_ratio / count) : 1.0}};
    }
  }
  const double t_end = MMPI_Wtime();
  std::sort(errors.begin(), errors.end());
  const double median_err = errors.empty() ? 0 : errors[errors.size() / 2];
  report["points"] = points;
  report["per_collective"] = per_coll;
  report["model_median_relative_error"] = median_err;
  report["experiments"] = {{"search", experiments},
                           {"builtin_reference", reference_experiments},
                           {"full_grid", grid_total}};
  report["search_seconds"] = t_end - t_measured;
  report["total_seconds"] = t_end - t_start;

  int rc = 0;
  if (rank == 0) {
    if (!o.measure_only) {
      std::ostringstream when;
      when << "layout " << x << "+" << y << ", " << (o.quick ? "quick" : "full") << " mode, "
           << experiments << " experiments of a " << grid_total << "-point grid";
      const std::string toml = tuning_toml(
          tuned, x, y,
          {"written by zipper-tune (docs/tuning.md); MMPI_TUNING_FILE=<this file>", when.str()});
      std::ofstream f(o.tuning_out);
      f << toml;
      if (!f) {
        std::fprintf(stderr, "zipper-tune: cannot write %s\n", o.tuning_out.c_str());
        rc = 1;
      }
      for (const auto& [name, v] : per_coll.items())
        std::printf("zipper-tune: %-9s tuned vs built-in: geometric mean speedup %.3f\n",
                    name.c_str(), v["speedup_vs_builtin_geomean"].get<double>());
      std::printf("zipper-tune: model median |pred-meas|/meas = %.1f %% over %zu measurements\n",
                  100 * median_err, errors.size());
      std::printf(
          "zipper-tune: %ld experiments (+%ld built-in references) instead of %ld (full "
          "grid): %.1fx fewer\n",
          experiments, reference_experiments, grid_total,
          experiments ? double(grid_total) / experiments : 0.0);
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
  MMPI_Finalize();
  return rc;
}
