#include "prometheus_text.h"

#include <fmt/format.h>

#include <functional>
#include <set>

#ifndef ZIPPER_VERSION
#define ZIPPER_VERSION "unknown"
#endif
#ifndef ZIPPER_GIT_COMMIT
#define ZIPPER_GIT_COMMIT "unknown"
#endif

namespace zipper::forwarder {

namespace {

// Label values escape backslash, double quote and newline.
std::string esc(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

class Writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    name_ = name;
  }
  void sample(const std::string& labels, double v) {
    out_ += name_;
    if (!labels.empty()) out_ += "{" + labels + "}";
    out_ += fmt::format(" {}\n", v);
  }
  void sample(const std::string& labels, std::uint64_t v) {
    out_ += name_;
    if (!labels.empty()) out_ += "{" + labels + "}";
    out_ += fmt::format(" {}\n", v);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_, name_;
};

}  // namespace

BuildInfo build_info() { return {ZIPPER_VERSION, ZIPPER_GIT_COMMIT}; }

std::string prometheus_text(const Snapshot& s, const BuildInfo& b, const MetricsOptions& opt) {
  Writer w;
  w.family("zipper_build_info", "gauge", "zipperd build; always 1.");
  w.sample(fmt::format("version=\"{}\",commit=\"{}\"", esc(b.version), esc(b.commit)),
           std::uint64_t{1});
  w.family("zipper_uptime_seconds", "gauge", "Seconds since zipperd started.");
  w.sample("", s.uptime_s);
  w.family("zipper_draining", "gauge", "1 while draining for maintenance (no new jobs).");
  w.sample("", std::uint64_t{s.draining});
  w.family("zipper_jobs", "gauge", "Jobs with at least one rank connected.");
  w.sample("", s.jobs_active);
  w.family("zipper_ranks", "gauge", "Ranks connected, all jobs.");
  w.sample("", s.ranks_connected);

  const auto per_side = [&](const char* name, const char* type, const char* help,
                            const std::function<std::uint64_t(const SideSnapshot&)>& f) {
    w.family(name, type, help);
    for (const auto& d : s.sides) w.sample(fmt::format("side=\"{}\"", esc(d.name)), f(d));
  };
  per_side("zipper_side_received_bytes_total", "counter",
           "Payload bytes of relayed frames that arrived on this side.",
           [](const SideSnapshot& d) { return d.received.bytes; });
  per_side("zipper_side_received_frames_total", "counter",
           "Relayed frames that arrived on this side.",
           [](const SideSnapshot& d) { return d.received.frames; });
  per_side("zipper_side_sent_bytes_total", "counter",
           "Payload bytes of relayed frames queued to clients on this side.",
           [](const SideSnapshot& d) { return d.sent.bytes; });
  per_side("zipper_side_sent_frames_total", "counter",
           "Relayed frames queued to clients on this side.",
           [](const SideSnapshot& d) { return d.sent.frames; });
  per_side("zipper_side_connections_accepted_total", "counter",
           "Client connections accepted on this side.",
           [](const SideSnapshot& d) { return d.connections_accepted; });
  per_side("zipper_side_connections", "gauge", "Client connections open on this side.",
           [](const SideSnapshot& d) { return d.connections_open; });

  // Per-job series carry the job's label (Job::job_label), never its id, and
  // at most one series per label: a label both running and in the finished
  // history (or twice in the history) is shown once, the running one first.
  std::vector<const JobSnapshot*> jobs;
  if (opt.per_job_series) {
    std::set<std::string> seen;
    for (const auto& j : s.jobs)
      if (seen.insert(j.label).second) jobs.push_back(&j);
  }
  const auto per_job = [&](const char* name, const char* help, bool bytes) {
    w.family(name, "counter", help);
    for (const JobSnapshot* j : jobs) {
      // Two sites: the two-site shorthand's names; more: by the sending site.
      for (std::size_t site = 0; site < j->from_site.size(); ++site) {
        const std::string direction = j->from_site.size() == 2
                                          ? (site == 0 ? "low_to_high" : "high_to_low")
                                          : "from_site_" + std::to_string(site);
        const Traffic& t = j->from_site[site];
        w.sample(fmt::format("job=\"{}\",direction=\"{}\"", esc(j->label), direction),
                 bytes ? t.bytes : t.frames);
      }
    }
  };
  per_job("zipper_job_bytes_total",
          "Payload bytes relayed for a job, by direction (running and recently finished jobs).",
          true);
  per_job("zipper_job_frames_total", "Frames relayed for a job, by direction.", false);
  w.family("zipper_job_ranks", "gauge", "Ranks of a running job connected to this zipperd.");
  for (const JobSnapshot* j : jobs)
    if (!j->finished)
      w.sample(fmt::format("job=\"{}\"", esc(j->label)), std::uint64_t{j->ranks_connected});

  // Routes: one series per destination site (at most 64), labelled with
  // its hops so a route that changes length shows as a new series.
  w.family("zipper_route_hops", "gauge",
           "Bridges a frame to this site crosses, this one included (1: a local leg).");
  for (const auto& r : s.routes)
    w.sample(fmt::format("site=\"{}\"", esc(r.site)), std::uint64_t{r.hops});
  w.family("zipper_route_next_hops", "gauge",
           "Equal-cost next hops of the route to this site (traffic is striped over them).");
  for (const auto& r : s.routes)
    w.sample(fmt::format("site=\"{}\"", esc(r.site)), std::uint64_t{r.next_hops.size()});
  w.family("zipper_route_sent_bytes_total", "counter",
           "Payload bytes of relayed frames to ranks of this site, all jobs.");
  for (const auto& r : s.routes)
    w.sample(fmt::format("site=\"{}\",hops=\"{}\"", esc(r.site), r.hops), r.sent.bytes);
  w.family("zipper_route_sent_frames_total", "counter",
           "Relayed frames to ranks of this site, all jobs.");
  for (const auto& r : s.routes)
    w.sample(fmt::format("site=\"{}\",hops=\"{}\"", esc(r.site), r.hops), r.sent.frames);

  w.family("zipper_credit_stalls_total", "counter",
           "Times a connection's credit ran out, so its client had to wait.");
  w.sample("", s.credit_stalls);
  w.family("zipper_memory_stalls_total", "counter",
           "Times a connection's receive paused because zipperd's payload memory was full.");
  w.sample("", s.memory_stalls);
  w.family("zipper_control_deferrals_total", "counter",
           "Receive rounds in which a connection spent its --control-budget of frames without "
           "payload (the rest waited for the next round).");
  w.sample("", s.control_deferrals);
  w.family("zipper_pings_dropped_total", "counter",
           "PINGs not answered because the connection's last answer was still queued.");
  w.sample("", s.pings_dropped);
  w.family("zipper_pings_over_share_total", "counter",
           "PINGs dropped unanswered because their connection was over its --ping-rate share.");
  w.sample("", s.pings_over_share);
  w.family("zipper_pings_deferred_total", "counter",
           "PING answers put off to their tenant's next token (--tenant-ping-rate).");
  w.sample("", s.pings_deferred);
  w.family("zipper_pings_over_tenant_share_total", "counter",
           "PINGs dropped unanswered because their tenant's next token (--tenant-ping-rate) "
           "was too far off.");
  w.sample("", s.pings_over_tenant_share);
  w.family("zipper_departure_notices_total", "counter",
           "Coalesced notices of ranks that left without BYE, one per window per job.");
  w.sample("", s.departure_notices);
  w.family("zipper_reaper_backlog", "gauge",
           "Closed connections and job-wide notices queued for the reaper thread.");
  w.sample("", s.reaper_backlog);
  w.family("zipper_jobs_aborted_total", "counter",
           "Jobs ended by a rank's MPI_Abort, relayed to the other cluster's ranks.");
  w.sample("", s.jobs_aborted);
  w.family("zipper_aborts_refused_total", "counter",
           "ABORT frames refused: they named another job or rank than their connection's.");
  w.sample("", s.aborts_refused);
  w.family("zipper_jobs_evicted_total", "counter",
           "Idle jobs evicted (--idle-evict) to admit a new job or connection.");
  w.sample("", s.jobs_evicted);
  w.family("zipper_unadmitted_evicted_total", "counter",
           "Connections not yet admitted closed to make room at --max-connections.");
  w.sample("", s.unadmitted_evicted);
  w.family("zipper_spliced_frames_total", "counter",
           "Relayed payloads that moved by splice() from socket to socket (zipperd copied none "
           "of their bytes).");
  w.sample("", s.spliced.frames);
  w.family("zipper_spliced_bytes_total", "counter", "Payload bytes of those frames.");
  w.sample("", s.spliced.bytes);
  w.family("zipper_protocol_errors_total", "counter",
           "Malformed, spoofed or out-of-order frames, and credit overruns.");
  w.sample("", s.protocol_errors);
  w.family("zipper_auth_errors_total", "counter", "Connections refused by authentication.");
  w.sample("", s.auth_errors);
  w.family("zipper_jobs_refused_draining_total", "counter",
           "New jobs refused while draining (jobs, not ranks; not protocol errors).");
  w.sample("", s.jobs_refused_draining);
  w.family("zipper_ranks_refused_total", "counter",
           "Ranks refused admission for any reason (limits, layout, side, slot, drain).");
  w.sample("", s.ranks_refused);

  const auto per_pool = [&](const char* name, const char* help,
                            const std::function<std::uint64_t(const PoolStats&)>& f) {
    w.family(name, "gauge", help);
    for (const auto& p : s.pools) w.sample(fmt::format("pool=\"{}\"", esc(p.name)), f(p));
  };
  per_pool("zipper_pool_buffer_size_bytes", "Size of one buffer of the pool.",
           [](const PoolStats& p) { return p.buffer_bytes; });
  per_pool("zipper_pool_buffers", "Buffers in the pool.",
           [](const PoolStats& p) { return p.buffers; });
  per_pool("zipper_pool_buffers_in_use", "Buffers held now.",
           [](const PoolStats& p) { return p.in_use; });
  per_pool("zipper_pool_buffers_peak", "Most buffers held at once since start.",
           [](const PoolStats& p) { return p.peak; });
  return w.take();
}

}  // namespace zipper::forwarder
