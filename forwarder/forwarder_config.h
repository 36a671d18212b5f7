// The forwarder core's settings (zipperd's part of the one settings table,
// daemon_config.cpp, which fills this struct from flags and the TOML file)
// and their cross-field check. Units are in each field's comment.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../proto/link.h"
#include "bridge_map.h"
#include "buffer_pool.h"

namespace zipper::proto::auth {
class HostKey;
}

namespace zipper::forwarder {

/// Upper bound on --conn-credits (frames): the wire's credit field is 32 bits,
/// and a larger grant would only let one client occupy more of the pools.
inline constexpr std::uint32_t kMaxConnCredits = 1u << 16;

struct Config {
  struct ListenSpec {
    std::string name;  // "A", "B", ...
    proto::Endpoint endpoint;
  };
  std::vector<ListenSpec> listen;
  std::uint32_t conn_credits = 64;        // frames (buffers) a client may have inside zipperd
  std::uint64_t max_memory = 256u << 20;  // bytes of all payload pools together
  std::uint32_t max_frame = 1u << 20;     // largest accepted payload (bytes)
  /// Payload pool classes; empty = default_pool_classes(max_memory, max_frame).
  std::vector<PoolClassConfig> pools;
  int hello_timeout_ms = 10000;  // a connection must say hello and authenticate within
  // Admission: "secret" (proof of the job secret, proto/auth.h), "munge"
  // (also a MUNGE credential; a job is kept to one uid) or "auto" (munge
  // where munged answers, else secret: auth_mode.h; zipperd's default).
  std::string auth = "secret";
  // munged socket per listener, in listener order (clusters with different
  // MUNGE keys); empty or missing entries use libmunge's default socket.
  std::vector<std::string> munge_socket;
  std::uint32_t max_ranks = 65536;        // largest layout x+y a job may claim
  std::uint32_t max_jobs = 64;            // jobs served at once
  std::uint32_t max_connections = 16384;  // client connections at once, admitted or not
  // A job's layout x+y may claim at most this percentage of max_connections.
  std::uint32_t max_job_connections_share = 50;
  // Jobs at once per owner: the MUNGE uid with --auth munge, else the source
  // address of the job's first rank.
  std::uint32_t max_jobs_per_user = 16;
  // Jobs at once per source address prefix (/prefix_v4, /prefix_v6) of a
  // job's first rank: many addresses of one subnet count as one.
  std::uint32_t max_jobs_per_prefix = 32;
  std::uint32_t prefix_v4 = 24, prefix_v6 = 64;
  // A job that relayed nothing for this long may be evicted when a limit
  // would otherwise refuse a new job, or a connection at --max-connections
  // (JobRegistry::idle_victim says which goes first).
  int idle_evict_ms = 300000;
  // Frames without payload one connection may have handled per receive
  // round (control_budget.h).
  std::uint32_t control_budget = 32;
  // PINGs one connection has answered per second, and back to back after a
  // quiet spell (ping_share.h; 0: no share).
  std::uint32_t ping_rate = 64, ping_burst = 16;
  // PINGs one tenant (tenant_share.h) has answered per second over all its
  // connections, a second's worth back to back (tenant_ping_share.h; 0: no
  // share); one over it is answered up to tenant_ping_wait_ms late, else
  // dropped. 16384/s answers 12,000 idle ranks at libmmpi's default
  // timeout (a PING per rank every 750 ms of silence).
  std::uint32_t tenant_ping_rate = 16384;
  int tenant_ping_wait_ms = 250;
  int ready_timeout_ms = 120000;  // an admitted rank's job must be complete within this time
  int frame_timeout_ms = 30000;   // a frame's payload must arrive within this time of its header
  int keepalive_s = 60;           // TCP keepalive idle seconds on client links (0 = off)
  int accept_pause_ms = 1000;     // accepting pauses this long when out of file descriptors
  // With two listeners or more, legs are sites: the ranks of the job's site
  // s must arrive on the s-th listener (a bridge with N legs joins N sites,
  // the "star"), and a job of more sites than legs is refused. False: any
  // rank on any listener.
  bool group_sides = true;
  // TCP -> TCP payloads of 16-256 KiB move by splice() through a pipe
  // (pipe_pool.h): zipperd copies none of their bytes. Off by default: on the
  // emulated clusters (veth, 2 cores) copying measured faster
  // (docs/performance.md).
  bool splice = false;
  // zipperd's host key (proto/host_key.h), which clients pin; null: a fresh
  // key made at construction, known only to this process (tests, or
  // zipperd without --host-key).
  std::shared_ptr<const proto::auth::HostKey> host_key;
  // The verbs link's tunables for verbs: listeners and the links they accept
  // ([verbs] keys, --verbs-* flags; proto/verbs/config.h). zipperd reads no
  // ZIPPER_VERBS_* variable.
  proto::verbs::Config verbs;
  // The site graph (bridge_map.h): the deployment's site names in the jobs'
  // site order (empty: the listeners' names, in order) and the other bridge
  // nodes (--peer, --peer-key). check_config builds `bridges` from them.
  std::vector<std::string> site_names;
  std::vector<PeerSpec> peers;
  std::shared_ptr<const BridgeMap> bridges;
};

/// True when `cfg`'s listeners are legs serving one site each, in order
/// (group_sides with two listeners or more, or a bridge with peers).
inline bool legs_are_sites(const Config& cfg) {
  return cfg.group_sides && (cfg.listen.size() >= 2 || !cfg.peers.empty());
}

/// Checks `cfg` field by field and across fields, and fills the defaults that
/// depend on others (the pool classes). Throws std::invalid_argument naming
/// the setting and its allowed range. Builds cfg.bridges (the site graph and
/// its routes).
void check_config(Config& cfg);

}  // namespace zipper::forwarder
