// Admission to zipperd: HELLO (site table and leg checks), CHALLENGE (with the
// host key), AUTH (proof of the job key bound to this connection, optionally
// a MUNGE credential), then joining the job (JobRegistry: limits and shares)
// and the HELLO_ACK that confirms the host key to the rank; refusals,
// draining, and the eviction of idle jobs that a limit needed the room of.
// proto/auth.h has the exchange.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../proto/auth.h"
#include "../proto/frame.h"
#include "../proto/link.h"
#include "connection.h"
#include "connection_host.h"
#include "flow_control.h"
#include "forwarder_config.h"
#include "job_registry.h"
#include "rate_limited_log.h"
#include "stats.h"

namespace zipper::proto::auth {
class HostKey;
class MungeVerifier;
}  // namespace zipper::proto::auth

namespace zipper::forwarder {

/// Bytes of payload a connection may send before admission: a HELLO, or an
/// AUTH with a MUNGE credential.
inline constexpr std::uint32_t kPreHelloMaxPayload = 4096;

class Admission {
 public:
  /// `cfg` must have passed check_config; with cfg.auth "munge" (or "auto"
  /// where every listener's munged answers: auth_mode.h), opens one
  /// MUNGE verifier per listener (cfg.munge_socket). The references must
  /// outlive this object. Uses cfg.host_key, or makes a fresh key known only
  /// to this process when it is null.
  Admission(const Config& cfg, JobRegistry& registry, FlowControl& flow, Counters& counters,
            RateLimitedLog& log, ConnectionHost& host);
  ~Admission();
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  /// A HELLO from a connection not yet admitted (its receive thread): checks
  /// the site table and, where legs are sites (legs_are_sites), that the
  /// rank's site is one this bridge joins and its leg the one it arrived on;
  /// then sends the CHALLENGE. A refusal sends an ERROR (kBadHello) and
  /// closes the connection.
  void on_hello(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
                const proto::Payload& payload);
  /// An AUTH answering this connection's CHALLENGE: checks the proof (and
  /// the MUNGE credential), joins the job and sends HELLO_ACK, then JOB_READY
  /// once the job is complete. A refusal sends an ERROR (kAuth, kBadHello)
  /// and closes the connection.
  void on_auth(const std::shared_ptr<Connection>& conn, const proto::Payload& payload);

  /// A connection whose first frame header carried protocol version
  /// `peer_version`, not ours: one line in the log naming both, and an ERROR
  /// (kBadHello) naming both in the peer's version where its header is known
  /// (version 1 had the same header), then the connection is closed.
  void refuse_version(const std::shared_ptr<Connection>& conn, std::uint16_t peer_version);

  /// Ends every connection of a job the registry evicted (their receive
  /// threads close them), telling each rank why.
  void end_evicted(const std::shared_ptr<Job>& job, const std::string& why);

  /// Draining: every new job is refused (kBadHello, "draining"), even one
  /// that names a running job's id with a secret of its own; ranks of running
  /// jobs (the same id and secret) are still admitted, and running jobs
  /// finish normally. Turning it on tells every running rank (kDraining).
  void set_draining(bool on);
  bool draining() const { return draining_.load(std::memory_order_relaxed); }
  /// The admission in force: "secret" or "munge" (--auth auto resolved at
  /// construction: auth_mode.h).
  const std::string& auth_mode() const { return auth_mode_; }

  /// The public half of the host key the CHALLENGE shows (what clients pin).
  const proto::auth::Key& host_public_key() const;

 private:
  void admit(const std::shared_ptr<Connection>& conn, JobRegistry::JoinRequest req,
             const proto::auth::Tag& confirm);
  void refuse(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
              const std::string& why);

  const Config& cfg_;
  JobRegistry& registry_;
  FlowControl& flow_;
  Counters& counters_;
  RateLimitedLog& log_;
  ConnectionHost& host_;
  std::shared_ptr<const proto::auth::HostKey> keys_;  // sealed job keys are opened with it
  std::vector<std::unique_ptr<proto::auth::MungeVerifier>> munge_;  // per side, --auth munge
  std::string auth_mode_;
  std::atomic<bool> draining_{false};
};

}  // namespace zipper::forwarder
