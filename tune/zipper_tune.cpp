// zipper-tune: measures the links of a running zipper job (LogGP/pLogP by
// PRTT, Hoefler et al.), models every collective algorithm on them (pLogP,
// models.h), confirms the model's best candidates by experiment with a
// hill-descent over n and segment size (Vadhiyar et al.) and writes the
// tuning file libmmpi reads plus a JSON report. One MMPI job, launched with
// zipper-run (docs/tuning.md); every rank runs the same deterministic plan.
#include <mmpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "measure.h"
#include "metrics.h"
#include "models.h"
#include "search.h"
#include "tuning_file.h"

using nlohmann::json;
using namespace zipper;
using namespace zipper::tune;

namespace {

struct Options {
  bool quick = false, measure_only = false, list = false;
  std::string tuning_out = "zipper-tuning.toml", report = "zipper-tune.json", check, reevaluate,
              links_from;
  std::vector<std::string> collectives = {"barrier",   "bcast",    "reduce",
                                          "allreduce", "alltoall", "alltoallv"};
  std::uint64_t max_bytes = 4u << 20, max_block = 1u << 20;
  double budget_ms = 0;
  int confirm = 0;
  double prune = 4;
  double margin = 0.05;
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
  return {{"L_us", p.L},           {"g_us", p.g0},
          {"L_load_us", p.L_load}, {"G_load_us_per_byte", p.G_load},
          {"G_us_per_byte", p.G},  {"G_mbit_per_s", p.G > 0 ? 8.0 / p.G : 0.0},
          {"points", pts},         {"thresholds", ths}};
}

json config_json(const Config& c) {
  return {{"algorithm", std::string(coll::name_of(c.algorithm))},
          {"n", c.n},
          {"segment_bytes", c.segment}};
}

// Message sizes of the forwarded contention experiments, bytes: a small
// (eager) one, and large ones in the rendezvous range.
std::vector<std::uint64_t> contention_sizes(bool quick) {
  return quick ? std::vector<std::uint64_t>{1024, 262144}
               : std::vector<std::uint64_t>{1024, 32768, 1048576};
}

// Segment sizes of the search grid, bytes (0 = unsegmented).
std::vector<std::uint64_t> segment_grid(bool quick) {
  std::vector<std::uint64_t> segs = {0};
  for (std::uint64_t s = quick ? 65536 : 16384; s <= (quick ? 262144u : 1u << 20); s *= 4)
    segs.push_back(s);
  return segs;
}

bool per_block(coll::Collective c) {
  return c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
}

std::vector<std::uint64_t> search_sizes(coll::Collective c, const Options& o) {
  if (c == coll::Collective::kBarrier) return {0};
  const std::uint64_t top = per_block(c) ? std::min(o.max_block, o.max_bytes) : o.max_bytes;
  return o.quick
             ? std::vector<std::uint64_t>{8, 4096, 65536, std::min<std::uint64_t>(top, 1u << 20)}
             : geometric(8, top, 2);
}

// The grid of one point: a segment as large as the message is the
// unsegmented algorithm, so only smaller ones are offered (alltoall: the
// aggregated message is about x·y blocks).
SearchSpace point_space(const std::vector<coll::AlgorithmTraits>& algorithms, coll::Collective c,
                        std::uint64_t bytes, int x, int y, const std::vector<std::uint64_t>& segs) {
  SearchSpace space{algorithms, std::min(x, y), {}};
  const std::uint64_t moved = per_block(c) ? bytes * std::uint64_t(x) * y : bytes;
  for (std::uint64_t s : segs)
    if (s < moved) space.segments.push_back(s);
  return space;
}

json contention_json(const Network& net) {
  json fc = json::array();
  for (const auto& c : net.fwd_contention)
    fc.push_back({{"bytes", c.bytes},
                  {"alone_us", c.alone},
                  {"low_to_high_us", c.low_to_high},
                  {"high_to_low_us", c.high_to_low},
                  {"exchange1_us", c.exchange1},
                  {"exchange_us", c.exchange}});
  return {{"gamma_alltoall", net.gamma_alltoall},
          {"forwarded", fc},
          {"senders_measured", net.senders_measured},
          {"forwarders_measured", net.forwarders_measured},
          {"op_us_per_byte", net.op_us_per_byte}};
}

LinkParams link_from_json(const json& j) {
  LinkParams p;
  p.L = j.at("L_us");
  p.g0 = j.at("g_us");
  p.G = j.at("G_us_per_byte");
  p.L_load = j.value("L_load_us", -1.0);
  p.G_load = j.value("G_load_us_per_byte", 0.0);
  for (const auto& q : j.at("points")) {
    SizePoint sp;
    sp.bytes = q.at("bytes");
    sp.rtt = q.at("prtt1_us");
    sp.g = q.at("g_us");
    sp.o_s = q.at("o_s_us");
    sp.o_r = q.at("o_r_us");
    p.points.push_back(sp);
  }
  return p;
}

// The model's inputs as a report stored them (throws json errors).
Network network_from_report(const json& rep) {
  Network net;
  net.low = link_from_json(rep.at("links").at("intra_low"));
  net.high = link_from_json(rep.at("links").at("intra_high"));
  net.forwarded = link_from_json(rep.at("links").at("forwarded"));
  const json& c = rep.at("contention");
  net.gamma_alltoall = c.at("gamma_alltoall");
  net.senders_measured = c.at("senders_measured");
  // Reports of one forwarder only before issue 18.
  net.forwarders_measured = c.value("forwarders_measured", 1);
  net.forwarders = net.forwarders_measured;
  net.op_us_per_byte = c.at("op_us_per_byte");
  // Reports written before the host check ran as if every rank had a node.
  if (rep.contains("host")) net.shared_cores = rep.at("host").at("shared_cores");
  // Reports written before the stream gaps have one ratio (low -> high at
  // 1 MiB): no stream gaps then, the model falls back to the forwarded g.
  if (c.contains("forwarded"))
    for (const auto& f : c.at("forwarded"))
      net.fwd_contention.push_back({f.at("bytes"), f.at("alone_us"), f.at("low_to_high_us"),
                                    f.at("high_to_low_us"), f.at("exchange1_us"),
                                    f.at("exchange_us")});
  return net;
}

Config config_from_json(const json& j, coll::Collective c) {
  return {*coll::algorithm_named(c, j.at("algorithm").get<std::string>()), j.at("n"),
          j.at("segment_bytes")};
}

// The report's points as metrics.h outcomes. Tuned against built-in: the
// verification's independent samples where the choices differ, ratio 1
// where they are the same configuration.
std::vector<PointOutcome> outcomes_of(const json& points) {
  std::vector<PointOutcome> out;
  for (const auto& p : points) {
    PointOutcome q;
    q.collective = p.at("collective");
    q.bytes = p.at("bytes");
    for (const auto& k : p.at("candidates")) {
      q.predicted.push_back(k.at("predicted_us"));
      q.measured.push_back(k.at("measured_us"));
    }
    q.pick_is_best = p.at("model_pick") == p.at("measured_best");
    q.model_pick_us = p.at("model_pick_us");
    q.best_us = p.at("measured_best_us");
    if (p.contains("verified")) {
      q.tuned_us = p["verified"].at("tuned_us");
      q.builtin_us = p["verified"].at("builtin_us");
    } else if (p.at("tuned") == p.at("builtin")) {
      q.tuned_us = q.builtin_us = p.at("builtin_us");
    } else {
      q.tuned_us = p.at("tuned_us");
      q.builtin_us = p.at("builtin_us");
    }
    out.push_back(q);
  }
  return out;
}

json figures_json(const RunFigures& f) {
  json per = json::object();
  for (const auto& c : f.per_collective)
    per[c.collective] = {{"points", c.points},
                         {"speedup_vs_builtin_geomean", c.speedup_geomean},
                         {"worst_tuned_over_builtin", c.worst_tuned_ratio},
                         {"worst_at_bytes", c.worst_bytes}};
  return {{"model_median_relative_error", f.median_error},
          {"model_median_signed_error", f.median_signed_error},
          {"model_errors_counted", f.errors},
          {"picks_differing_from_best", f.picks_differ},
          {"picks_within_10_percent", f.picks_within_10},
          {"picks_not_measured", f.picks_unmeasured},
          {"worst_pick_over_best", f.worst_pick_ratio},
          {"worst_tuned_over_builtin", f.worst_tuned_ratio},
          {"per_collective", per}};
}

void print_figures(const RunFigures& f) {
  for (const auto& c : f.per_collective)
    std::printf(
        "zipper-tune: %-9s tuned vs built-in: geometric mean speedup %.3f, worst tuned/built-in "
        "%.3f (%llu B)\n",
        c.collective.c_str(), c.speedup_geomean, c.worst_tuned_ratio,
        (unsigned long long)c.worst_bytes);
  std::printf(
      "zipper-tune: model median |pred-meas|/meas = %.1f %% (signed %+.1f %%) over %d "
      "measurements\n",
      100 * f.median_error, 100 * f.median_signed_error, f.errors);
  std::printf(
      "zipper-tune: model pick differs from the measured best at %d points: %d within 10 %%, "
      "worst pick/best %.3f, %d not measured\n",
      f.picks_differ, f.picks_within_10, f.worst_pick_ratio, f.picks_unmeasured);
}

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
  for (const auto& c : o.collectives)
    if (!coll::collective_named(c)) {
      std::fprintf(stderr, "zipper-tune: unknown collective '%s'\n", c.c_str());
      return 2;
    }
  if (o.list) {
    std::printf("%s\n", list_algorithms(o.collectives).dump(1).c_str());
    return 0;
  }
  if (!o.reevaluate.empty())
    return reevaluate(o.reevaluate, o.links_from, app.count("--report") ? o.report : "");
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
  net.senders_measured = smax;
  {
    // Measured through every forwarder the ranks reach.
    net.forwarders_measured = std::max(forwarders, 1);
    net.forwarders = net.forwarders_measured;
  }
  for (std::uint64_t b : contention_sizes(o.quick))
    net.fwd_contention.push_back(measure_forwarded_contention(x, smax, b, b <= 65536 ? 32 : 8));
  // G under load: every rank streaming inside its cluster at once.
  {
    const std::uint64_t big = o.quick ? 262144 : 1048576;
    const auto [low, high] = intra_stream_gaps(x, big, 8);
    if (x >= 2) net.low.G_load = low / static_cast<double>(big);
    if (y >= 2) net.high.G_load = high / static_cast<double>(big);
  }
  double native_barrier_us[2] = {0, 0};
  // Under load: a native barrier in both clusters at once gives the
  // latency of a step when every rank waits (loggp.h L_load); the
  // forwarded class gets the intra classes' mean excess over their quiet L
  // (its receiver waits the same way).
  {
    double t[2] = {0, 0}, out[2] = {0, 0};
    t[rank < x ? 0 : 1] = time_native_barrier(50);
    MMPI_Allreduce(t, out, 2, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD);
    set_load_from_barrier(net.low, x, out[0]);
    set_load_from_barrier(net.high, y, out[1]);
    double excess = 0;
    int classes = 0;
    for (const LinkParams* p : {&net.low, &net.high})
      if (p->L_load >= 0) {
        excess += p->L_load - p->L;
        ++classes;
      }
    if (classes > 0) net.forwarded.L_load = net.forwarded.L + excess / classes;
    native_barrier_us[0] = out[0];
    native_barrier_us[1] = out[1];
  }
  {
    // [BM] γ: native all-to-all at 64 KiB blocks against the flat model.
    const std::uint64_t blk = 65536;
    const double t = time_native_alltoall(blk, 10);
    const LinkParams& mine = rank < x ? net.low : net.high;
    const int P = rank < x ? x : y;
    double gamma = 1;
    if (P > 1 && mine.g(blk) > 0) gamma = std::max(1.0, (t - mine.lat()) / ((P - 1) * mine.g(blk)));
    double out = 1;
    MMPI_Allreduce(&gamma, &out, 1, MPI_DOUBLE, MPI_MAX, MMPI_COMM_WORLD);
    net.gamma_alltoall = out;
  }
  net.op_us_per_byte = time_reduce_op();
  // One host for every rank, with fewer cores than ranks (the emulated
  // clusters)? Then steps that separate nodes run at once take turns on the
  // cores (Network::shared_cores). Ranks share a kernel when they share its
  // boot id, whatever their network namespace or host name.
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  bool one_host = false;
  {
    std::string boot;
    if (std::ifstream f("/proc/sys/kernel/random/boot_id"); f) std::getline(f, boot);
    const std::uint64_t h = boot.empty() ? 0 : std::hash<std::string>{}(boot);
    std::uint64_t lo = 0, hi = 0;
    MMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MMPI_COMM_WORLD);
    MMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MMPI_COMM_WORLD);
    one_host = lo != 0 && lo == hi;
  }
  net.shared_cores = one_host && cores > 0 && x + y > cores;
  const double t_measured = MMPI_Wtime();

  json report;
  report["layout"] = {{"x", x}, {"y", y}};
  report["mode"] = o.quick ? "quick" : "full";
  report["links"] = {{"intra_low", link_json(net.low, th_low)},
                     {"intra_high", link_json(net.high, th_high)},
                     {"forwarded", link_json(net.forwarded, th_fwd)}};
  report["contention"] = contention_json(net);
  report["host"] = {{"one_host", one_host},
                    {"cores", cores},
                    {"ranks", x + y},
                    {"shared_cores", net.shared_cores}};
  report["native_barrier_us"] = {{"low", native_barrier_us[0]}, {"high", native_barrier_us[1]}};
  report["configured_thresholds_bytes"] = {
      {"zipper_eager_limit", env_u64("MMPI_EAGER_LIMIT", 16384)},
      {"zipper_chunk_size", env_u64("MMPI_CHUNK_SIZE", 131072)},
      {"openmpi_btl_tcp_eager_limit", env_u64("OMPI_MCA_btl_tcp_eager_limit", 65536)}};
  report["measure_seconds"] = t_measured - t_start;
  if (rank == 0) {
    auto line = [](const char* what, const LinkParams& p, const std::vector<Threshold>& th) {
      std::printf(
          "zipper-tune: %-10s L=%.1f us  g=%.1f us  G=%.5f us/B (%.0f Mbit/s)  under load: L "
          "%.1f us, G %.0f Mbit/s",
          what, p.L, p.g0, p.G, p.G > 0 ? 8.0 / p.G : 0.0, p.L_load,
          p.G_load > 0 ? 8.0 / p.G_load : 0.0);
      for (const auto& t : th)
        std::printf("  step %llu..%llu B (+%.0f us)", (unsigned long long)t.below,
                    (unsigned long long)t.above, t.jump_us);
      std::printf("\n");
    };
    line("intra-A", net.low, th_low);
    line("intra-B", net.high, th_high);
    line("forwarded", net.forwarded, th_fwd);
    std::printf("zipper-tune: gamma alltoall %.2f; forwarded stream gaps, %d streams:",
                net.gamma_alltoall, smax);
    for (const auto& c : net.fwd_contention)
      std::printf("  %llu B: alone %.1f a->b %.1f b->a %.1f exchange %.1f (1 pair %.1f) us",
                  (unsigned long long)c.bytes, c.alone, c.low_to_high, c.high_to_low, c.exchange,
                  c.exchange1);
    std::printf("; measuring took %.1f s\n", t_measured - t_start);
    std::printf("zipper-tune: host: %s, %ld cores for %d ranks: %s\n",
                one_host ? "every rank on one host" : "ranks on several hosts", cores, x + y,
                net.shared_cores ? "steps that run at once share the cores (their times add)"
                                 : "steps that run at once overlap");
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
  if (!o.measure_only) {
    const std::vector<std::uint64_t> segs = segment_grid(o.quick);
    for (const auto& cname : o.collectives) {
      const coll::Collective c = *coll::collective_named(cname);
      const auto algorithms = library_algorithms(cname);
      std::optional<Config> prev;
      for (std::uint64_t bytes : search_sizes(c, o)) {
        const SearchSpace space = point_space(algorithms, c, bytes, x, y, segs);
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
        // The built-in choice stays unless the search's best beats it by
        // more than --margin: a smaller lead is within the noise of one
        // experiment on a loaded host, and the best of several noisy
        // samples is biased low.
        Config chosen = r.best;
        double chosen_us = r.best_us;
        if (!(chosen_us < builtin_us * (1 - o.margin))) {
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
          if (k.config == r.model_pick) model_pick_us = k.measured_us;
        }
        json point = {{"collective", cname},
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
                      {"tuned_us", chosen_us}};
        // Verification: where the tuned choice differs from the built-in
        // one, time both again, alternating (built-in, tuned, built-in,
        // tuned), each the better of its two: samples independent of the
        // search's, which picked the faster of its own and so favours tuned.
        if (!(chosen == builtin)) {
          double vb = 1e300, vt = 1e300;
          for (int rep = 0; rep < 2; ++rep) {
            vb = std::min(vb, time_collective(c, builtin, true, bytes, o.budget_ms * 1000, 200));
            vt = std::min(vt, time_collective(c, chosen, false, bytes, o.budget_ms * 1000, 200));
          }
          reference_experiments += 4;
          point["verified"] = {{"builtin_us", vb}, {"tuned_us", vt}};
        }
        if (rank == 0) {
          std::printf(
              "zipper-tune: %-9s %8llu B  tuned %-12s n=%d seg=%-7llu %10.1f us  built-in "
              "%-12s %10.1f us  (%d of %zu measured)",
              cname.c_str(), (unsigned long long)bytes,
              std::string(coll::name_of(chosen.algorithm)).c_str(), chosen.n,
              (unsigned long long)chosen.segment, chosen_us, alg, builtin_us, r.experiments,
              r.candidates.size());
          if (point.contains("verified"))
            std::printf("  again: tuned/built-in %.3f",
                        point["verified"]["tuned_us"].get<double>() /
                            point["verified"]["builtin_us"].get<double>());
          std::printf("\n");
          std::fflush(stdout);
        }
        points.push_back(point);
      }
      MMPIX_Coll_set(cname.c_str(), "", 0);
      MMPIX_Coll_set_segment(cname.c_str(), -1);
    }
  }
  const double t_end = MMPI_Wtime();
  report["points"] = points;
  const RunFigures figures = run_figures(outcomes_of(points));
  report["figures"] = figures_json(figures);
  report["model_median_relative_error"] = figures.median_error;
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
      print_figures(figures);
      std::printf(
          "zipper-tune: %ld experiments (+%ld built-in references and verification) instead of %ld "
          "(full "
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
