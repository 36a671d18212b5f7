// libmmpi's link configuration, made from the environment zipper-run sets
// (docs/launch-contract.md; every variable in settings.h's table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../proto/auth.h"
#include "../proto/verbs/config.h"
#include "forwarder_pins.h"
#include "sites.h"

namespace zipper::client {

struct ClientConfig {
  std::optional<std::string> forwarder;  // [tcp:]HOST:PORT; unset = standalone
  std::uint64_t job_id = 0;              // MMPI_JOB_ID, else derived from the secret
  // MMPI_JOB_SECRET (64 hex digits) or MMPI_JOB_SECRET_FILE (a 0600 file of
  // them): proves membership of the job to zipperd. Required with a forwarder.
  std::optional<proto::auth::Secret> job_secret;
  // zipperd host keys to demand (MMPI_FORWARDER_KEYS, MMPI_KNOWN_FORWARDERS,
  // MMPI_FORWARDER_KEY_CHECK; forwarder_pins.h).
  ForwarderPins pins;
  std::string munge_socket;  // MMPI_MUNGE_SOCKET: munged for zipperd --auth munge (empty: default)
  // The job's sites with a forwarder: ranks per site in world-rank order,
  // and this process's site: MMPI_SITES and MMPI_SITE, or the launcher's
  // two-site shorthand (MMPI_NP_LOW = x, MMPI_NP_HIGH = y, MMPI_GROUP);
  // every layer reads the SiteMap that sites_from makes of them. Empty
  // standalone.
  std::vector<std::uint32_t> site_ranks;
  std::uint32_t site = 0;
  bool site_list = false;             // from MMPI_SITES (else the two-site shorthand)
  std::uint64_t eager_limit = 16384;  // bytes; larger messages use the rendezvous
  std::uint64_t chunk_size = 131072;  // bytes: largest rendezvous chunk
  int connect_timeout_s = 60;         // whole job must connect within this
  int spin_rounds = 1000;             // MMPI_SPIN_ROUNDS: busy progress rounds before a wait sleeps
  // MMPI_FORWARDER_TIMEOUT (ms): a forwarder that does not answer a PING
  // within it is out of use (client/rails.h), and data unacknowledged that
  // long is resent (client/peer_transport.h). With one forwarder, PINGs are
  // sent only when the variable is set (0: never).
  int forwarder_timeout_ms = 3000;
  bool forwarder_timeout_set = false;
  // MMPI_RETRANSMIT_BYTES: eager bytes kept for resending over several
  // forwarders until acknowledged; beyond it, sends use the rendezvous.
  std::uint64_t retransmit_bytes = 32u << 20;
  // ZIPPER_VERBS_*: the verbs link's tunables (proto/verbs/config.h), for
  // every verbs: forwarder address.
  proto::verbs::Config verbs;
};

class Environment;  // environment.h

/// The link's configuration from the MMPI_* and ZIPPER_VERBS_* values in `env` (settings.h has
/// the table); removes MMPI_JOB_SECRET from the process environment once
/// read, so that programs the rank starts do not inherit it. Returns nullopt
/// and sets *why on invalid values.
std::optional<ClientConfig> config_from(const Environment& env, std::string* why);
/// config_from(Environment::capture(), why).
std::optional<ClientConfig> config_from_env(std::string* why);

/// The job's sites (sites.h) from `c`, for a process whose cluster runs
/// `local_ranks` ranks (its Open MPI world size): standalone, one site of
/// local_ranks; with a forwarder, the sites of site_ranks, this process in
/// `site`. Returns nullopt and sets *why when the
/// site's declared size is not local_ranks (the launcher and mpirun disagree).
std::optional<SiteMap> sites_from(const ClientConfig& c, int local_ranks, std::string* why);

}  // namespace zipper::client
