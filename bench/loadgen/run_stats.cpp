#include "run_stats.h"

#include <algorithm>
#include <stdexcept>

namespace zipper::loadgen {

namespace {

// Earliest of two times where 0 means none.
std::uint64_t earliest(std::uint64_t a, std::uint64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

void add(PerRail& to, const PerRail& from) {
  if (to.size() < from.size()) to.resize(from.size());
  for (std::size_t i = 0; i < from.size(); ++i)
    for (int g = 0; g < 2; ++g) to[i][g] += from[i][g];
}

}  // namespace

void GroupStats::merge(const GroupStats& o) {
  sent += o.sent;
  received += o.received;
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  latency.merge(o.latency);
  rank_admission.merge(o.rank_admission);
  first_send_ns = earliest(first_send_ns, o.first_send_ns);
  last_recv_ns = std::max(last_recv_ns, o.last_recv_ns);
  add(rail_frames, o.rail_frames);
  add(rail_bytes, o.rail_bytes);
  add(rail_connections, o.rail_connections);
}

nlohmann::json GroupStats::to_json() const {
  return {{"sent", sent},
          {"received", received},
          {"bytes_sent", bytes_sent},
          {"bytes_received", bytes_received},
          {"latency", latency.to_json()},
          {"rank_admission", rank_admission.to_json()},
          {"first_send_ns", first_send_ns},
          {"last_recv_ns", last_recv_ns},
          {"rail_frames", rail_frames},
          {"rail_bytes", rail_bytes},
          {"rail_connections", rail_connections}};
}

GroupStats GroupStats::from_json(const nlohmann::json& j) {
  try {
    GroupStats g;
    g.sent = j.at("sent");
    g.received = j.at("received");
    g.bytes_sent = j.at("bytes_sent");
    g.bytes_received = j.at("bytes_received");
    g.latency = LatencyHistogram::from_json(j.at("latency"));
    g.rank_admission = LatencyHistogram::from_json(j.at("rank_admission"));
    g.first_send_ns = j.at("first_send_ns");
    g.last_recv_ns = j.at("last_recv_ns");
    g.rail_frames = j.at("rail_frames").get<PerRail>();
    g.rail_bytes = j.at("rail_bytes").get<PerRail>();
    g.rail_connections = j.at("rail_connections").get<PerRail>();
    return g;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("group statistics: ") + e.what());
  }
}

void JobTimes::merge(const JobTimes& o) {
  first_connect = earliest(first_connect, o.first_connect);
  all_ready = std::max(all_ready, o.all_ready);
  close_start = earliest(close_start, o.close_start);
  closed = std::max(closed, o.closed);
  vanished = vanished || o.vanished;
  ranks += o.ranks;
}

nlohmann::json JobTimes::to_json() const {
  return {{"first_connect", first_connect}, {"all_ready", all_ready},
          {"close_start", close_start},     {"closed", closed},
          {"vanished", vanished},           {"ranks", ranks}};
}

JobTimes JobTimes::from_json(const nlohmann::json& j) {
  try {
    JobTimes t;
    t.first_connect = j.at("first_connect");
    t.all_ready = j.at("all_ready");
    t.close_start = j.at("close_start");
    t.closed = j.at("closed");
    t.vanished = j.at("vanished");
    t.ranks = j.at("ranks");
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("job times: ") + e.what());
  }
}

}  // namespace zipper::loadgen
