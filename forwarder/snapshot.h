// A read-only picture of a running zipperd: what zipperctl shows and /metrics
// exports. Forwarder::snapshot() fills it from relaxed counters, so totals
// are exact once traffic has stopped and may lag by in-flight frames while it
// runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traffic_counters.h"

namespace zipper::forwarder {

/// One listener ("side"), e.g. the cluster A subnet.
struct SideSnapshot {
  std::string name;     // listener name from --listen NAME=...
  std::string address;  // bound address
  Traffic received;     // relayed frames that arrived on this side
  Traffic sent;         // relayed frames queued to connections of this side
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_open = 0;
};

/// One job (its id and secret). Kept after its last rank left, in a short
/// history, so that its final counters stay readable.
struct JobSnapshot {
  std::string label;     // the job's label everywhere (log, zipperctl, /metrics): Job::job_label
  std::uint64_t id = 0;  // MMPI job id (JSON: a string; never in /metrics or the log)
  std::vector<std::uint32_t> sites;  // the site table: ranks per site, in world-rank order
  std::uint32_t ranks_connected = 0;
  bool finished = false;           // every rank has left
  double age_s = 0;                // seconds since its first rank said hello
  std::vector<Traffic> from_site;  // relayed frames sent by each site's ranks
};

/// One client connection.
struct LinkSnapshot {
  std::uint64_t id = 0;
  std::string side;
  std::string peer;
  std::string job;  // the job's label; empty before admission
  std::uint32_t vrank = 0;
  std::uint64_t credits_granted = 0;  // frames (--conn-credits)
  std::uint64_t credits_in_use = 0;   // frames the client has inside zipperd now
  std::uint64_t queued_bytes = 0;     // bytes queued towards this client
  Traffic received;                   // relayed frames from this client
  Traffic sent;                       // relayed frames to this client
  std::uint64_t credit_stalls = 0;    // times its credit ran out (the client had to wait)
  std::uint64_t memory_stalls = 0;    // times its receive paused for lack of memory
  std::uint64_t errors = 0;           // protocol errors charged to it
  double age_s = 0;
};

/// One route of this bridge (route_table.h): to a destination site, over
/// its equal-cost next hops.
struct RouteSnapshot {
  std::string site;                    // destination site's name (--site-names)
  std::uint32_t site_index = 0;        // its index in the jobs' site tables
  std::uint32_t hops = 0;              // bridges crossed, this one included (1: a local leg)
  std::uint64_t cost = 0;              // sum of leg costs on the path
  std::vector<std::string> next_hops;  // "leg C", "bridge B|C over site B"
  Traffic sent;                        // relayed frames to ranks of that site, all jobs
};

/// One buffer pool (by size class). Until pools exist the whole payload
/// memory budget is reported as one class of 1-byte "buffers".
struct PoolStats {
  std::string name;
  std::uint64_t buffer_bytes = 0;  // size of one buffer
  std::uint64_t buffers = 0;       // buffers in the pool
  std::uint64_t in_use = 0;        // buffers held now
  std::uint64_t peak = 0;          // most buffers held at once
};

struct Snapshot {
  double uptime_s = 0;
  bool draining = false;  // no new jobs admitted
  std::uint64_t jobs_active = 0;
  std::uint64_t ranks_connected = 0;
  Traffic relayed;  // all sides
  std::uint64_t connections_accepted = 0;
  std::uint64_t protocol_errors = 0;
  std::uint64_t auth_errors = 0;            // refused authentications (AUTH frames that failed)
  std::uint64_t jobs_refused_draining = 0;  // new jobs (not ranks) refused while draining
  std::uint64_t ranks_refused = 0;          // ranks refused admission, any reason (drain included)
  std::uint64_t credit_stalls = 0;          // summed over connections, closed ones included
  std::uint64_t memory_stalls = 0;
  // Receive rounds a connection's control budget cut short, PING
  // answers dropped, idle jobs evicted, unadmitted connections closed for room.
  std::uint64_t control_deferrals = 0;
  std::uint64_t pings_dropped = 0;
  std::uint64_t pings_over_share = 0;         // dropped over the connection's --ping-rate
  std::uint64_t pings_deferred = 0;           // answers put off to the tenant's next token
  std::uint64_t pings_over_tenant_share = 0;  // dropped: the tenant's next token too far off
  std::uint64_t departure_notices = 0;        // coalesced departure notices
  std::uint64_t reaper_backlog = 0;           // closes and fan-outs queued for the reaper thread
  std::uint64_t jobs_aborted = 0;             // ended by a rank's ABORT (MPI_Abort)
  std::uint64_t aborts_refused = 0;           // ABORTs naming another job or rank: refused
  std::uint64_t jobs_evicted = 0;
  std::uint64_t unadmitted_evicted = 0;
  Traffic spliced;  // relayed payloads that moved by splice() (pipe_pool.h), all sides
  std::vector<SideSnapshot> sides;
  std::vector<JobSnapshot> jobs;  // active first, then recently finished
  std::vector<LinkSnapshot> links;
  std::vector<PoolStats> pools;
  std::string bridge;                 // this bridge's name in the site graph ("A|B")
  std::vector<RouteSnapshot> routes;  // by destination site; sites without a route left out
};

}  // namespace zipper::forwarder
