#include "snapshot_json.h"

namespace zipper::forwarder {

namespace {
nlohmann::json traffic(const Traffic& t) { return {{"frames", t.frames}, {"bytes", t.bytes}}; }
}  // namespace

nlohmann::json to_json(const Snapshot& s) {
  using nlohmann::json;
  json out;
  out["status"] = {{"state", s.draining ? "draining" : "running"},
                   {"uptime_s", s.uptime_s},
                   {"jobs_active", s.jobs_active},
                   {"ranks_connected", s.ranks_connected},
                   {"relayed", traffic(s.relayed)},
                   {"connections_accepted", s.connections_accepted},
                   {"protocol_errors", s.protocol_errors},
                   {"auth_errors", s.auth_errors},
                   {"jobs_refused_draining", s.jobs_refused_draining},
                   {"ranks_refused", s.ranks_refused},
                   {"credit_stalls", s.credit_stalls},
                   {"memory_stalls", s.memory_stalls},
                   {"control_deferrals", s.control_deferrals},
                   {"pings_dropped", s.pings_dropped},
                   {"pings_over_share", s.pings_over_share},
                   {"pings_deferred", s.pings_deferred},
                   {"pings_over_tenant_share", s.pings_over_tenant_share},
                   {"departure_notices", s.departure_notices},
                   {"reaper_backlog", s.reaper_backlog},
                   {"jobs_aborted", s.jobs_aborted},
                   {"aborts_refused", s.aborts_refused},
                   {"jobs_evicted", s.jobs_evicted},
                   {"unadmitted_evicted", s.unadmitted_evicted},
                   {"spliced", traffic(s.spliced)}};
  json sides = json::array();
  for (const auto& d : s.sides)
    sides.push_back({{"name", d.name},
                     {"address", d.address},
                     {"received", traffic(d.received)},
                     {"sent", traffic(d.sent)},
                     {"connections_accepted", d.connections_accepted},
                     {"connections_open", d.connections_open}});
  out["status"]["sides"] = sides;
  json jobs = json::array();
  for (const auto& j : s.jobs) {
    json from = json::array();
    for (const Traffic& t : j.from_site) from.push_back(traffic(t));
    json o = {{"job", j.label},
              {"id", std::to_string(j.id)},  // a string: u64 loses precision in jq
              {"sites", j.sites},
              {"ranks_connected", j.ranks_connected},
              {"state", j.finished ? "finished" : "running"},
              {"age_s", j.age_s},
              {"from_site", from}};
    // A two-site job keeps the names of the two-site shorthand (x+y, the
    // low and the high group).
    if (j.sites.size() == 2) {
      o["np_low"] = j.sites[0];
      o["np_high"] = j.sites[1];
      o["low_to_high"] = traffic(j.from_site[0]);
      o["high_to_low"] = traffic(j.from_site[1]);
    }
    jobs.push_back(std::move(o));
  }
  out["jobs"] = jobs;
  json links = json::array();
  for (const auto& l : s.links)
    links.push_back({{"id", l.id},
                     {"side", l.side},
                     {"peer", l.peer},
                     {"job", l.job},
                     {"rank", l.vrank},
                     {"credits_granted_frames", l.credits_granted},
                     {"credits_in_use_frames", l.credits_in_use},
                     {"queued_bytes", l.queued_bytes},
                     {"received", traffic(l.received)},
                     {"sent", traffic(l.sent)},
                     {"credit_stalls", l.credit_stalls},
                     {"memory_stalls", l.memory_stalls},
                     {"errors", l.errors},
                     {"age_s", l.age_s}});
  out["links"] = links;
  json pools = json::array();
  for (const auto& p : s.pools)
    pools.push_back({{"name", p.name},
                     {"buffer_bytes", p.buffer_bytes},
                     {"buffers", p.buffers},
                     {"in_use", p.in_use},
                     {"peak", p.peak}});
  out["pools"] = pools;
  json routes = json::array();
  for (const auto& r : s.routes)
    routes.push_back({{"site", r.site},
                      {"site_index", r.site_index},
                      {"hops", r.hops},
                      {"cost", r.cost},
                      {"next_hops", r.next_hops},
                      {"sent", traffic(r.sent)}});
  out["routes"] = {{"bridge", s.bridge}, {"routes", routes}};
  return out;
}

}  // namespace zipper::forwarder
