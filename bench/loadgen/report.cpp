#include "report.h"

#include <algorithm>
#include <sstream>

namespace zipper::loadgen {

namespace {

double secs(std::uint64_t from, std::uint64_t to) {
  return from && to > from ? static_cast<double>(to - from) / 1e9 : 0;
}

// Mean and max of a list of durations (s), null when empty.
nlohmann::json mean_max(const std::vector<double>& v, double scale) {
  if (v.empty()) return {{"mean", nullptr}, {"max", nullptr}, {"count", 0}};
  double sum = 0;
  for (double d : v) sum += d;
  return {{"mean", sum / v.size() * scale},
          {"max", *std::max_element(v.begin(), v.end()) * scale},
          {"count", v.size()}};
}

nlohmann::json group_json(const Options& o, const std::vector<JobPlan>& plans, const RunResult& r,
                          std::size_t g) {
  const bool churn = g == o.jobs.size();
  const JobSpec& spec = churn ? o.churn.job : o.jobs[g];
  const GroupStats& s = r.groups[g];
  std::vector<double> admission, departure;
  std::uint64_t jobs = 0, vanished = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].group != g) continue;
    ++jobs;
    const JobTimes& t = r.jobs[i];
    if (t.all_ready) admission.push_back(secs(t.first_connect, t.all_ready));
    if (t.vanished)
      ++vanished;
    else if (t.closed)
      departure.push_back(secs(t.close_start, t.closed));
  }
  const double window = secs(s.first_send_ns, s.last_recv_ns);
  nlohmann::json j = {
      {"name", churn ? "churn" : spec.name},
      {"churn", churn},
      {"jobs", jobs},
      {"layout", spec.layout.text()},
      {"pattern", std::string(to_string(spec.pattern))},
      {"size_b", spec.size},
      {"messages_per_pair", spec.messages},
      {"rate_per_rank", churn ? 0.0 : spec.rate},
      {"expected", expected_messages(o, plans, g)},
      {"sent", s.sent},
      {"received", s.received},
      {"bytes", s.bytes_received},
      {"latency_us",
       {{"p50", s.latency.quantile(0.5) / 1e3},
        {"p99", s.latency.quantile(0.99) / 1e3},
        {"max", static_cast<double>(s.latency.max()) / 1e3},
        {"mean", s.latency.mean() / 1e3}}},
      {"rank_admission_ms",
       {{"p50", s.rank_admission.quantile(0.5) / 1e6},
        {"p99", s.rank_admission.quantile(0.99) / 1e6},
        {"max", static_cast<double>(s.rank_admission.max()) / 1e6}}},
      {"job_admission_s", mean_max(admission, 1)},
      {"job_departure_ms", mean_max(departure, 1e3)},
      {"throughput_msgs_s", window > 0 ? static_cast<double>(s.received) / window : 0},
      {"throughput_mb_s", window > 0 ? static_cast<double>(s.bytes_received) / window / 1e6 : 0}};
  if (churn || spec.vanish_after_s >= 0) {
    j["jobs_vanished"] = vanished;
    j["jobs_orderly"] = jobs - vanished;
  }
  return j;
}

nlohmann::json zipperd_json(const Options& o, const std::vector<JobPlan>& plans, const RunResult& r,
                            std::size_t i) {
  const ZipperdSamples& s = r.zipperds[i];
  std::uint64_t steady_ranks = 0;
  for (const auto& p : plans)
    if (!p.churn) steady_ranks += p.spec->layout.size();
  // Frames through this zipperd while the traffic ran: its own counter when
  // it has /metrics, else what our ranks sent through it.
  double frames = 0;
  if (s.m_admitted && s.m_traffic) {
    frames = s.m_traffic->sum("zipper_side_received_frames_total") -
             s.m_admitted->sum("zipper_side_received_frames_total");
  } else {
    for (const auto& g : r.groups)
      if (i < g.rail_frames.size()) frames += g.rail_frames[i][0] + g.rail_frames[i][1];
  }
  const auto kib = [](const std::optional<ProcSample>& p) -> nlohmann::json {
    return p ? nlohmann::json(p->rss_kib) : nlohmann::json(nullptr);
  };
  nlohmann::json j = {{"index", i},
                      {"pid", o.zipperds[i].pid},
                      {"rss_kib",
                       {{"base", kib(s.base)},
                        {"admitted", kib(s.admitted)},
                        {"traffic", kib(s.traffic)},
                        {"end", kib(s.end)}}},
                      {"hwm_kib", s.end ? nlohmann::json(s.end->hwm_kib) : nlohmann::json(nullptr)},
                      {"frames_traffic", frames}};
  if (s.base && s.admitted && steady_ranks) {
    const double grown = (static_cast<double>(s.admitted->rss_kib) - s.base->rss_kib) * 1024;
    const double cpu = s.admitted->cpu_s - s.base->cpu_s;
    j["rss_per_admitted_rank_b"] = grown / static_cast<double>(steady_ranks);
    j["cpu_admission_s"] = cpu;
    j["cpu_per_admitted_rank_us"] = cpu / static_cast<double>(steady_ranks) * 1e6;
  }
  if (s.admitted && s.traffic) {
    const double cpu = s.traffic->cpu_s - s.admitted->cpu_s;
    j["cpu_traffic_s"] = cpu;
    j["cpu_per_frame_us"] = frames > 0 ? nlohmann::json(cpu / frames * 1e6) : nullptr;
  }
  return j;
}

}  // namespace

nlohmann::json report_json(const Options& o, const std::vector<JobPlan>& plans,
                           const RunResult& r) {
  nlohmann::json groups = nlohmann::json::array(), zipperds = nlohmann::json::array(),
                 checks = nlohmann::json::array();
  for (std::size_t g = 0; g < r.groups.size(); ++g)
    if (g < o.jobs.size() || o.churn.jobs > 0) groups.push_back(group_json(o, plans, r, g));
  for (std::size_t i = 0; i < r.zipperds.size(); ++i)
    zipperds.push_back(zipperd_json(o, plans, r, i));
  for (const auto& c : r.checks)
    checks.push_back({{"zipperd", c.zipperd},
                      {"what", c.what},
                      {"expected", c.expected},
                      {"got", c.got},
                      {"ok", c.ok()}});
  return {{"tool", "zipper-loadgen"},
          {"ok", r.ok()},
          {"procs", o.procs},
          {"zippers", o.zipperds.size()},
          {"wall_s", secs(r.t_start, r.t_end)},
          {"admission_phase_s", secs(r.t_start, r.t_go)},
          {"traffic_phase_s", secs(r.t_go, r.t_traffic_done)},
          {"loadgen_cpu_s", r.loadgen_cpu_s},
          {"counters_checked", r.counters_checked},
          {"error_count", r.error_count},
          {"errors", r.errors},
          {"checks", checks},
          {"groups", groups},
          {"zipperd", zipperds}};
}

std::string report_csv(const nlohmann::json& rep) {
  static const char* const kCols[] = {"group",
                                      "pattern",
                                      "layout",
                                      "jobs",
                                      "size_b",
                                      "messages_per_pair",
                                      "sent",
                                      "received",
                                      "latency_p50_us",
                                      "latency_p99_us",
                                      "latency_max_us",
                                      "throughput_msgs_s",
                                      "throughput_mb_s",
                                      "job_admission_mean_s",
                                      "job_admission_max_s",
                                      "rank_admission_p99_ms",
                                      "job_departure_mean_ms",
                                      "zipperd_rss_per_admitted_rank_b",
                                      "zipperd_cpu_per_frame_us",
                                      "zipperd_cpu_per_admitted_rank_us",
                                      "zippers",
                                      "ok"};
  std::ostringstream out;
  for (std::size_t i = 0; i < std::size(kCols); ++i) out << (i ? "," : "") << kCols[i];
  out << "\n";
  // zipperd's figures, averaged over the zipperds that have them.
  const auto mean_of = [&](const char* key) -> std::string {
    double sum = 0;
    int n = 0;
    for (const auto& z : rep.at("zipperd"))
      if (z.contains(key) && z.at(key).is_number()) sum += z.at(key).get<double>(), ++n;
    return n ? std::to_string(sum / n) : "";
  };
  const auto num = [](const nlohmann::json& v) -> std::string {
    return v.is_null() ? "" : v.dump();
  };
  for (const auto& g : rep.at("groups")) {
    out << g.at("name").get<std::string>() << "," << g.at("pattern").get<std::string>() << ","
        << g.at("layout").get<std::string>() << "," << g.at("jobs") << "," << g.at("size_b") << ","
        << g.at("messages_per_pair") << "," << g.at("sent") << "," << g.at("received") << ","
        << num(g.at("latency_us").at("p50")) << "," << num(g.at("latency_us").at("p99")) << ","
        << num(g.at("latency_us").at("max")) << "," << num(g.at("throughput_msgs_s")) << ","
        << num(g.at("throughput_mb_s")) << "," << num(g.at("job_admission_s").at("mean")) << ","
        << num(g.at("job_admission_s").at("max")) << "," << num(g.at("rank_admission_ms").at("p99"))
        << "," << num(g.at("job_departure_ms").at("mean")) << ","
        << mean_of("rss_per_admitted_rank_b") << "," << mean_of("cpu_per_frame_us") << ","
        << mean_of("cpu_per_admitted_rank_us") << "," << rep.at("zippers") << ","
        << (rep.at("ok").get<bool>() ? 1 : 0) << "\n";
  }
  return out.str();
}

}  // namespace zipper::loadgen
