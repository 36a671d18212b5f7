// Admission: HELLO (site table and leg checks), CHALLENGE (with the host key),
// AUTH (proof of the job key bound to this connection, optionally a MUNGE
// credential), then joining the job and the HELLO_ACK that confirms the host
// key to the rank; refusals and draining. proto/auth.h has the exchange.
#include "admission.h"

#include "../proto/host_key.h"
#include "../proto/munge.h"
#include "../proto/site_hello.h"
#include "address_prefix.h"
#include "auth_mode.h"
#include "control_frames.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::LinkStatus;
using proto::OutFrame;
using proto::Payload;

namespace {

// Whose job it is, for --max-jobs-per-user: the MUNGE uid, else the source
// address (the peer without its port).
std::string owner_of(const Connection& c, const std::optional<std::uint32_t>& uid) {
  if (uid) return "uid " + std::to_string(*uid);
  std::string peer = c.link->peer();
  if (const auto colon = peer.rfind(':');
      colon != std::string::npos && colon > 0 &&
      peer.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    peer.resize(colon);
  return "address " + peer;
}

// Every site of a job's table must have a route from this bridge, and this
// zipperd relays only to its own legs: a site behind another bridge is
// refused with the route that would reach it.
std::string check_routes(const BridgeMap& map, std::size_t sites) {
  for (std::size_t d = 0; d < sites; ++d) {
    const Route* r = map.routes.find(static_cast<int>(d));
    if (!r) return map.routes.no_route(static_cast<int>(d), map.site_names);
    if (!r->next.front().local())
      return "site " + map.site_name(static_cast<int>(d)) + " is " + std::to_string(r->hops) +
             " bridges away (over " + map.next_hops_text(*r) +
             "), and this zipperd does not relay frames to other bridges yet";
  }
  return {};
}

}  // namespace

Admission::Admission(const Config& cfg, JobRegistry& registry, FlowControl& flow,
                     Counters& counters, RateLimitedLog& log, ConnectionHost& host)
    : cfg_(cfg),
      registry_(registry),
      flow_(flow),
      counters_(counters),
      log_(log),
      host_(host),
      keys_(cfg.host_key ? cfg.host_key : std::make_shared<proto::auth::HostKey>()) {
  const auto socket_of = [&](std::size_t i) {
    return i < cfg_.munge_socket.size() ? cfg_.munge_socket[i] : std::string();
  };
  std::vector<MungeProbe> probes;
  if (cfg_.auth == "auto")
    for (std::size_t i = 0; i < cfg_.listen.size(); ++i)
      probes.push_back(probe_munge(socket_of(i)));
  auth_mode_ = resolve_auth(cfg_.auth, probes);
  if (cfg_.auth == "auto") {
    if (auth_mode_ == "munge")
      spdlog::info(
          "--auth auto: munged answers on every listener; admission uses MUNGE (a "
          "tenant is a uid)");
    else
      spdlog::info(
          "--auth auto: no MUNGE ({}); admission by the job secret alone (a tenant is "
          "an address prefix)",
          probes.empty() ? std::string("no listener") : [&] {
            for (const auto& p : probes)
              if (!p.usable) return p.why;
            return std::string();
          }());
  }
  if (auth_mode_ == "munge")
    for (std::size_t i = 0; i < cfg_.listen.size(); ++i)
      munge_.push_back(std::make_unique<proto::auth::MungeVerifier>(
          i < cfg_.munge_socket.size() ? cfg_.munge_socket[i] : std::string()));
}

Admission::~Admission() = default;

const proto::auth::Key& Admission::host_public_key() const { return keys_->public_key(); }

void Admission::refuse(const std::shared_ptr<Connection>& conn, ErrorCode code,
                       const std::string& why) {
  if (code == ErrorCode::kAuth)
    ++counters_.auth_failures;
  else
    ++counters_.refused_admissions;
  log_.warn("refuse", "refused {}: {}", conn->link->peer(), why);
  send_error(conn, code, conn->hello.vrank, 0, why);
  host_.close_conn(conn, "admission refused: " + why);
}

void Admission::refuse_version(const std::shared_ptr<Connection>& conn,
                               std::uint16_t peer_version) {
  ++counters_.refused_admissions;
  log_.warn("version", "refused {}",
            proto::version_mismatch(peer_version, proto::kVersion,
                                    "the rank at " + conn->link->peer(), "zipperd"));
  // Protocol 1's frame header is ours but for the version: the old rank
  // reads this ERROR and prints its text, which names both versions.
  const std::uint16_t answer = peer_version == 1 ? peer_version : proto::kVersion;
  const std::string local = conn->link->local_address();
  send_error(conn, ErrorCode::kBadHello, conn->hello.vrank, 0,
             proto::version_mismatch(proto::kVersion, peer_version,
                                     "zipperd at " + (local.empty() ? conn->link->peer() : local),
                                     "libmmpi"),
             answer);
  host_.close_conn(conn, "protocol version " + std::to_string(peer_version));
}

// HELLO: check what can be checked without the secret, then challenge.
void Admission::on_hello(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         const Payload& payload) {
  if (conn->hello_seen) return refuse(conn, ErrorCode::kBadHello, "second HELLO");
  proto::SiteHello hello;
  std::string why;
  if (!proto::decode_site_hello(payload.bytes, &hello, &why)) {
    conn->hello.vrank = hello.vrank;  // the refusal names the rank the hello claimed
    return refuse(conn, ErrorCode::kBadHello, "malformed hello: " + why);
  }
  conn->hello_seen = true;
  conn->hello = {hdr.job_id, hello.vrank, hello.site, hello.site_ranks};
  if (const std::string bad = registry_.check_layout(hello.site_ranks, hello.vrank); !bad.empty())
    return refuse(conn, ErrorCode::kBadHello, bad);
  // Legs are sites: site s connects on its leg (the s-th listener, or the
  // one --site-names says); with peers, every site of the job needs a route.
  if (legs_are_sites(cfg_)) {
    const BridgeMap& map = *cfg_.bridges;
    if (const std::string bad = map.has_peers() ? check_routes(map, hello.site_ranks.size())
                                                : proto::check_sites_joined(hello.site_ranks.size(),
                                                                            cfg_.listen.size());
        !bad.empty())
      return refuse(conn, ErrorCode::kBadHello, bad);
    const int leg = map.leg_of_site.at(hello.site);
    if (conn->side != leg)
      return refuse(conn, ErrorCode::kBadHello,
                    "rank " + std::to_string(hello.vrank) + " belongs to site " +
                        std::to_string(hello.site) + ", which connects on leg " +
                        (leg < 0 ? "of another bridge" : cfg_.listen[leg].name) + ", not " +
                        cfg_.listen[conn->side].name);
  }
  conn->challenge.nonce = proto::auth::random_nonce();
  conn->challenge.server_key = keys_->public_key();
  OutFrame ch;
  ch.hdr.type = FrameType::kChallenge;
  ch.hdr.flags = munge_.empty() ? 0 : proto::auth::kWantMunge;
  ch.hdr.job_id = hdr.job_id;
  ch.hdr.dst = hello.vrank;
  ch.payload = Payload::allocate(proto::auth::kChallengeSize);
  proto::auth::encode_challenge(conn->challenge,
                                ch.payload.bytes.first<proto::auth::kChallengeSize>());
  send_control(conn, std::move(ch));
}

// AUTH: the proof of the job key for this connection's challenge and this
// connection's ends (and the MUNGE credential); HELLO_ACK then confirms to
// the rank that we hold the host key it saw.
void Admission::on_auth(const std::shared_ptr<Connection>& conn, const Payload& payload) {
  namespace auth = proto::auth;
  if (!conn->hello_seen) return refuse(conn, ErrorCode::kAuth, "AUTH before HELLO");
  auth::AuthPayload a;
  if (!auth::decode_auth(payload.bytes, &a))
    return refuse(conn, ErrorCode::kAuth, "malformed AUTH payload");
  // The rank's view of the connection must be ours, mirrored: a rank that
  // connected to another socket (a squatter relaying to us) named other ends.
  const std::string local = conn->link->local_address(), remote = conn->link->remote_address();
  if ((!local.empty() || !remote.empty()) && (a.client_local != remote || a.client_peer != local))
    return refuse(conn, ErrorCode::kAuth,
                  "relayed connection: the rank connected from " + a.client_local + " to " +
                      a.client_peer + ", zipperd sees " + remote + " -> " + local);
  JobRegistry::JoinRequest req;
  req.job_id = conn->hello.job_id;
  req.fingerprint = a.fingerprint;
  req.sites = conn->hello.site_ranks;
  req.vrank = conn->hello.vrank;
  if (!munge_.empty()) {
    std::string why;
    auto uid = munge_[conn->side]->verify(a.munge_cred, conn->challenge.nonce, &why);
    if (!uid) return refuse(conn, ErrorCode::kAuth, why);
    req.uid = uid;
  }
  if (auto job = registry_.find(req.job_id, req.fingerprint)) {
    req.key = job->auth_key();
  } else {
    // An unknown job: its key must come sealed to our host key and hash to
    // the fingerprint (one X25519 operation, once per job).
    auto key = keys_->open(a.sealed_key);
    if (!key || auth::job_fingerprint(*key) != a.fingerprint)
      return refuse(conn, ErrorCode::kAuth, "job key does not match its fingerprint");
    req.key = *key;
  }
  if (!auth::check_tag(req.key, conn->challenge, a, conn->hello))
    return refuse(conn, ErrorCode::kAuth, "wrong proof of the job secret");
  const auth::Tag confirm = auth::confirm_tag(req.key, a.tag);
  admit(conn, req, confirm);
}

void Admission::admit(const std::shared_ptr<Connection>& conn, JobRegistry::JoinRequest req,
                      const proto::auth::Tag& confirm) {
  // Draining: only ranks of a job that exists (its id and secret) join.
  req.may_create = !draining();
  req.owner = owner_of(*conn, req.uid);
  req.prefix = address_prefix(conn->link->peer(), cfg_.prefix_v4, cfg_.prefix_v6);
  OutFrame ack;
  ack.hdr.type = FrameType::kHelloAck;
  ack.hdr.job_id = req.job_id;
  ack.hdr.dst = req.vrank;
  ack.payload = Payload::allocate(proto::kHelloAckSize);
  proto::encode_hello_ack({cfg_.conn_credits, cfg_.max_frame, confirm},
                          ack.payload.bytes.first<proto::kHelloAckSize>());
  // Queued before the rank is visible: the JOB_READY that the job's last
  // rank sends from another side's thread must come after it.
  req.before_publish = [&] { conn->link->post(std::move(ack)); };
  conn->link->set_max_payload(cfg_.max_frame);
  auto r = registry_.join(req, conn);
  for (const auto& gone : r.evicted) end_evicted(gone, "a new job needed its place");
  if (!r.job) {
    conn->link->set_max_payload(kPreHelloMaxPayload);
    // Counted once per job, not per rank.
    if (r.draining && r.first_refusal)
      counters_.refused_draining.fetch_add(1, std::memory_order_relaxed);
    return refuse(conn, ErrorCode::kBadHello, r.error);
  }
  flow_.set_jobs(registry_.job_count());
  log_.info("admit", r.job->label(), "job {}: rank {} of {} connected from {}", r.job->label(),
            req.vrank, proto::layout_text(req.sites), conn->link->peer());
  if (conn->link->progress_send() == LinkStatus::kError) conn->link->shutdown();
  const auto ready = [](const std::shared_ptr<Connection>& c) {
    OutFrame f;
    f.hdr.type = FrameType::kJobReady;
    f.hdr.job_id = c->job->id();
    f.hdr.dst = c->vrank;
    send_control(c, std::move(f));
  };
  if (r.now_ready) {
    log_.info("ready", r.job->label(), "job {}: all {} ranks connected", r.job->label(),
              r.job->size());
    // One frame per rank: on the reaper thread, not this relay thread. The
    // HELLO_ACKs were queued before each rank was published, so none is
    // overtaken.
    host_.defer([job = r.job, ready] {
      for (auto& c : job->members()) ready(c);
    });
  } else if (r.ready) {
    ready(conn);
  }
}

void Admission::set_draining(bool on) {
  if (draining_.exchange(on) == on) return;
  if (on) {
    spdlog::info("draining: no new jobs are admitted, {} running", registry_.job_count());
    // Ranks that use other forwarders too (client/rails.h) move their
    // traffic off this one and leave; a rank with no other keeps using it.
    // A notice per rank of every job: on the reaper thread.
    host_.defer([this] {
      for (const auto& job : registry_.active())
        for (const auto& c : job->members())
          send_error(c, ErrorCode::kDraining, c->vrank, 0,
                     "zipperd is draining for maintenance: move traffic to other forwarders");
    });
  } else {
    spdlog::info("drain ended: admitting new jobs ({} running)", registry_.job_count());
  }
}

void Admission::end_evicted(const std::shared_ptr<Job>& job, const std::string& why) {
  flow_.set_jobs(registry_.job_count());
  log_.warn("evict-job", "job {}: evicted after relaying nothing for --idle-evict: {}",
            job->label(), why);
  const std::string text = "the job relayed nothing for " +
                           std::to_string(cfg_.idle_evict_ms / 1000.0) +
                           " s and was evicted: " + why + " (--idle-evict)";
  // A frame per rank: on the reaper thread, not the relay thread that
  // needed the room.
  host_.defer([job, text] {
    for (auto& c : job->members()) {
      if (c->doomed.exchange(true)) continue;
      // Only the error frame is queued from here; the receive thread of the
      // connection closes it.
      send_error(c, ErrorCode::kBadHello, c->vrank, 0, text);
      c->link->shutdown();
    }
  });
}

}  // namespace zipper::forwarder
