// The Forwarder's counters as Stats and its snapshot for zipperctl and /metrics
// (the counters themselves are stats.h; the picture is snapshot.h).
#include <algorithm>

#include "forwarder.h"
#include "side.h"

namespace zipper::forwarder {

Stats Forwarder::stats() const {
  Stats st;
  st.frames_relayed = counters_.frames_relayed.load();
  st.bytes_relayed = counters_.bytes_relayed.load();
  st.connections = counters_.connections.load();
  st.protocol_errors = counters_.protocol_errors.load();
  st.peak_memory = flow_->pool().peak_bytes();
  st.pool_bytes = flow_->pool().total_bytes();
  const PipePool::Stats ps = flow_->pipes().stats();
  st.spliced_frames = ps.spliced_frames;
  st.spliced_bytes = ps.spliced_bytes;
  st.memory_registrations = proto::memory_registrations();
  st.pools = flow_->pool().stats();
  st.auth_failures = counters_.auth_failures.load();
  st.refused_admissions = counters_.refused_admissions.load();
  st.timeouts = counters_.timeouts.load();
  st.accept_pauses = counters_.accept_pauses.load();
  return st;
}

void Forwarder::note_protocol_error(const std::shared_ptr<Connection>& conn) {
  ++counters_.protocol_errors;
  conn->errors.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Forwarder::loop_rounds() const {
  std::vector<std::uint64_t> out;
  for (const auto& s : sides_) {
    out.push_back(s->rx_rounds.load(std::memory_order_relaxed));
    out.push_back(s->tx_rounds.load(std::memory_order_relaxed));
  }
  return out;
}

Snapshot Forwarder::snapshot() const {
  using namespace std::chrono;
  const auto now = steady_clock::now();
  const auto secs = [&](steady_clock::time_point t) { return duration<double>(now - t).count(); };
  Snapshot s;
  s.uptime_s = secs(started_at_);
  s.draining = draining();
  s.relayed = {counters_.frames_relayed.load(), counters_.bytes_relayed.load()};
  s.connections_accepted = counters_.connections.load();
  s.protocol_errors = counters_.protocol_errors.load();
  s.auth_errors = counters_.auth_failures.load();
  s.jobs_refused_draining = counters_.refused_draining.load();
  s.ranks_refused = counters_.refused_admissions.load();
  s.credit_stalls = counters_.credit_stalls.load();
  s.memory_stalls = counters_.memory_stalls.load();
  s.control_deferrals = counters_.control_deferrals.load();
  s.pings_dropped = counters_.pings_dropped.load();
  s.pings_over_share = counters_.pings_over_share.load();
  s.pings_deferred = counters_.pings_deferred.load();
  s.pings_over_tenant_share = counters_.pings_over_tenant_share.load();
  s.departure_notices = counters_.departure_notices.load();
  s.reaper_backlog = reaper_.backlog();
  s.jobs_aborted = counters_.jobs_aborted.load();
  s.aborts_refused = counters_.aborts_refused.load();
  s.jobs_evicted = registry_.evictions();
  s.unadmitted_evicted = counters_.unadmitted_evicted.load();
  const PipePool::Stats ps = flow_->pipes().stats();
  s.spliced = {ps.spliced_frames, ps.spliced_bytes};
  for (const auto& side : sides_) {
    struct Seen {
      std::shared_ptr<Connection> conn;
      std::string job;
      std::uint32_t vrank;
    };
    std::vector<Seen> conns;
    {
      std::lock_guard lk(side->mu);
      for (const auto& [id, c] : side->conns)
        if (c->admitted.load(std::memory_order_acquire))
          conns.push_back({c, c->job->label(), c->vrank});
        else
          conns.push_back({c, {}, 0});
    }
    std::sort(conns.begin(), conns.end(),
              [](const Seen& a, const Seen& b) { return a.conn->id < b.conn->id; });
    s.sides.push_back({side->name, side->listener->address(), side->received.load(),
                       side->sent.load(), side->accepted.load(), conns.size()});
    for (const auto& [c, job, vrank] : conns) {
      LinkSnapshot l;
      l.id = c->id;
      l.side = side->name;
      l.peer = c->link->peer();
      l.job = job;  // empty before admission
      l.vrank = vrank;
      l.credits_granted = c->credit.granted();
      l.credits_in_use = c->credit.in_use();
      l.queued_bytes = c->link->send_queued_bytes();
      l.received = c->received.load();
      l.sent = c->sent.load();
      l.credit_stalls = c->credit_stalls.load();
      l.memory_stalls = c->memory_stalls.load();
      l.errors = c->errors.load();
      l.age_s = secs(c->accepted);
      s.links.push_back(std::move(l));
    }
  }
  const auto add_job = [&](const Job& j, bool finished) {
    std::vector<Traffic> from;
    for (std::size_t site = 0; site < j.sites().size(); ++site) from.push_back(j.from_site(site));
    s.jobs.push_back(
        {j.label(), j.id(), j.sites(), j.connected(), finished, secs(j.created), std::move(from)});
  };
  for (const auto& j : registry_.active()) {
    add_job(*j, false);
    ++s.jobs_active;
    s.ranks_connected += j->connected();
  }
  for (const auto& j : registry_.finished()) add_job(*j, true);
  for (const auto& c : flow_->pool().stats())
    s.pools.push_back({c.name, c.buffer_bytes, c.buffers, c.in_use, c.peak});
  const BridgeMap& map = *cfg_.bridges;
  s.bridge = map.routes.graph()[0].name;
  for (const Route& r : map.routes.routes()) {
    RouteSnapshot rs;
    rs.site = map.site_name(r.dest_site);
    rs.site_index = static_cast<std::uint32_t>(r.dest_site);
    rs.hops = r.hops;
    rs.cost = r.cost;
    for (const auto& h : r.next) rs.next_hops.push_back(map.routes.describe(h, map.site_names));
    rs.sent = counters_.to_site[static_cast<std::size_t>(r.dest_site)].load();
    s.routes.push_back(std::move(rs));
  }
  return s;
}

}  // namespace zipper::forwarder
