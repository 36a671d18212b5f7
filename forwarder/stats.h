// zipperd's counters: Counters, the live atomics every collaborator adds to
// (admission, flow control, relay, sweeps), and Stats, a plain copy of the
// totals for tests and the shutdown line. Per-connection, per-side and
// per-job traffic lives with those (traffic_counters.h); snapshot.h has the
// picture for zipperctl and /metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "buffer_pool.h"
#include "route_table.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

/// Process-wide event counters (relaxed atomics: readers need totals, not
/// ordering). Each counts events since start; none is ever reset.
struct Counters {
  std::atomic<std::uint64_t> frames_relayed{0}, bytes_relayed{0};  // bytes: payload only
  std::atomic<std::uint64_t> connections{0};                       // accepted so far
  std::atomic<std::uint64_t> protocol_errors{0};
  std::atomic<std::uint64_t> auth_failures{0};       // AUTH frames refused
  std::atomic<std::uint64_t> refused_admissions{0};  // ranks refused (limits, layout, side, drain)
  std::atomic<std::uint64_t> refused_draining{0};    // jobs refused while draining (once per job)
  std::atomic<std::uint64_t> timeouts{0};            // connections closed by a timeout
  std::atomic<std::uint64_t> accept_pauses{0};       // accepts paused for lack of descriptors
  // Flow control: a client left without credit for a largest frame, a
  // receive paused for lack of memory.
  std::atomic<std::uint64_t> credit_stalls{0}, memory_stalls{0};
  // Times a connection spent its control budget (its frames then waited a
  // round), PING answers dropped (one already queued), connections not yet
  // admitted closed to make room at --max-connections.
  std::atomic<std::uint64_t> control_deferrals{0}, pings_dropped{0}, unadmitted_evicted{0};
  // PINGs dropped over their connection's --ping-rate share (ping_share.h).
  std::atomic<std::uint64_t> pings_over_share{0};
  // PING answers put off to their tenant's next token (--tenant-ping-rate),
  // and PINGs dropped because that token was too far off.
  std::atomic<std::uint64_t> pings_deferred{0}, pings_over_tenant_share{0};
  // Coalesced departure notices sent (one per window of a job's departures
  // without BYE, to every rank still there).
  std::atomic<std::uint64_t> departure_notices{0};
  // Jobs a rank's ABORT ended (relayed to the other cluster), and ABORT
  // frames refused because they named another job or rank than their
  // connection's.
  std::atomic<std::uint64_t> jobs_aborted{0}, aborts_refused{0};
  // Relayed frames by the destination rank's site: the traffic of each
  // route (route_table.h), all jobs together.
  std::array<TrafficCounters, kMaxRouteSites> to_site;
};

/// A plain copy of the Counters totals and the pools' figures at one instant
/// (Forwarder::stats()).
struct Stats {
  std::uint64_t frames_relayed = 0;
  std::uint64_t bytes_relayed = 0;  // payload bytes
  std::uint64_t connections = 0;    // accepted so far
  std::uint64_t protocol_errors = 0;
  std::uint64_t peak_memory = 0;  // bytes of pool buffers in use at once (capacities)
  std::uint64_t pool_bytes = 0;   // bytes mapped by the pools
  /// Memory registrations with RDMA devices (ibv_reg_mr calls) this process
  /// made so far: link buffers plus each pool region once per device; a
  /// relayed chunk adds none.
  std::uint64_t memory_registrations = 0;
  std::vector<PoolClassStats> pools;
  std::uint64_t spliced_frames = 0;  // payloads relayed by splice() (pipe_pool.h)
  std::uint64_t spliced_bytes = 0;
  std::uint64_t auth_failures = 0;  // AUTH frames refused
  std::uint64_t refused_admissions =
      0;                            // ranks refused admission (limits, layout, side, slot, drain)
  std::uint64_t timeouts = 0;       // connections closed by a timeout
  std::uint64_t accept_pauses = 0;  // times accepting paused for lack of descriptors
};

}  // namespace zipper::forwarder
