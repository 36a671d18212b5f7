// zipper-tune's JSON report, to and from (report_json.h).
#include "report_json.h"

#include <cstdio>
#include <string>

namespace zipper::tune {

using nlohmann::json;

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
  // Reports written before several bridge nodes: one forwarder only.
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

}  // namespace zipper::tune
