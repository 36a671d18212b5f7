// Admission: HELLO (layout and side checks), CHALLENGE, AUTH (proof of the
// job secret, optionally a MUNGE credential), then joining the job; refusals
// and draining.
#include "../proto/munge.h"
#include "forwarder.h"
#include "forwarder_internal.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::LinkStatus;
using proto::OutFrame;
using proto::Payload;

void Forwarder::refuse(const std::shared_ptr<Connection>& conn, ErrorCode code,
                       const std::string& why) {
  if (code == ErrorCode::kAuth)
    ++auth_failures_;
  else
    ++refused_admissions_;
  warn_limited("refuse", "refused {}: {}", conn->link->peer(), why);
  send_error(conn, code, conn->hello.vrank, 0, why);
  close_conn(conn, "admission refused: " + why);
}

// HELLO: check what can be checked without the secret, then challenge.
void Forwarder::on_hello(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         const Payload& payload) {
  proto::HelloPayload hello;
  if (conn->hello_seen) return refuse(conn, ErrorCode::kBadHello, "second HELLO");
  if (!proto::decode_hello(payload.bytes, &hello))
    return refuse(conn, ErrorCode::kBadHello, "malformed hello payload");
  conn->hello_seen = true;
  conn->hello = {hdr.job_id, hello.vrank, hello.np_low, hello.np_high};
  const std::string bad = registry_.check_layout(hello.np_low, hello.np_high, hello.vrank);
  if (!bad.empty()) return refuse(conn, ErrorCode::kBadHello, bad);
  if (cfg_.group_sides && sides_.size() == 2) {
    const int group_side = hello.vrank < hello.np_low ? 0 : 1;
    if (conn->side != group_side)
      return refuse(conn, ErrorCode::kBadHello,
                    "rank " + std::to_string(hello.vrank) + " belongs to the " +
                        (group_side == 0 ? "low" : "high") + " group, which connects on side " +
                        sides_[group_side]->name + ", not " + sides_[conn->side]->name);
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

// AUTH: the proof of the job secret (and the MUNGE credential) for this
// connection's challenge.
void Forwarder::on_auth(const std::shared_ptr<Connection>& conn, const Payload& payload) {
  namespace auth = proto::auth;
  if (!conn->hello_seen) return refuse(conn, ErrorCode::kAuth, "AUTH before HELLO");
  auth::AuthPayload a;
  if (!auth::decode_auth(payload.bytes, &a))
    return refuse(conn, ErrorCode::kAuth, "malformed AUTH payload");
  JobRegistry::JoinRequest req;
  req.job_id = conn->hello.job_id;
  req.fingerprint = a.fingerprint;
  req.np_low = conn->hello.np_low;
  req.np_high = conn->hello.np_high;
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
    // An unknown job: its secret must come sealed to our key and hash to
    // the fingerprint (one X25519 operation, once per job).
    auto secret = keys_->open(a.sealed_secret);
    if (!secret || auth::fingerprint(*secret) != a.fingerprint)
      return refuse(conn, ErrorCode::kAuth, "job secret does not match its fingerprint");
    req.key = auth::auth_key(*secret);
    auth::wipe(*secret);
  }
  if (!auth::check_tag(req.key, a.tag, conn->challenge, a.fingerprint, conn->hello))
    return refuse(conn, ErrorCode::kAuth, "wrong proof of the job secret");
  admit(conn, req);
}

void Forwarder::admit(const std::shared_ptr<Connection>& conn, JobRegistry::JoinRequest req) {
  if (draining() && !registry_.contains(req.job_id)) {
    refused_draining_.fetch_add(1, std::memory_order_relaxed);
    return refuse(conn, ErrorCode::kBadHello, "zipperd is draining for maintenance: no new jobs");
  }
  OutFrame ack;
  ack.hdr.type = FrameType::kHelloAck;
  ack.hdr.job_id = req.job_id;
  ack.hdr.dst = req.vrank;
  ack.payload = Payload::allocate(proto::kHelloAckSize);
  proto::encode_hello_ack({cfg_.conn_credits, cfg_.max_frame},
                          ack.payload.bytes.first<proto::kHelloAckSize>());
  // Queued before the rank is visible: the JOB_READY that the job's last
  // rank sends from another side's thread must come after it.
  req.before_publish = [&] { conn->link->post(std::move(ack)); };
  conn->link->set_max_payload(cfg_.max_frame);
  auto r = registry_.join(req, conn);
  if (!r.job) {
    conn->link->set_max_payload(kPreHelloMaxPayload);
    return refuse(conn, ErrorCode::kBadHello, r.error);
  }
  share_.set_jobs(registry_.job_count());
  spdlog::info("job {}: rank {} of {}+{} connected from {}", r.job->log_name(), req.vrank,
               req.np_low, req.np_high, conn->link->peer());
  if (conn->link->progress_send() == LinkStatus::kError) conn->link->shutdown();
  auto ready = [&](const std::shared_ptr<Connection>& c) {
    OutFrame f;
    f.hdr.type = FrameType::kJobReady;
    f.hdr.job_id = req.job_id;
    f.hdr.dst = c->vrank;
    send_control(c, std::move(f));
  };
  if (r.now_ready) {
    spdlog::info("job {}: all {} ranks connected", r.job->log_name(), r.job->size());
    for (auto& c : r.job->members()) ready(c);
  } else if (r.ready) {
    ready(conn);
  }
}

void Forwarder::set_draining(bool on) {
  if (draining_.exchange(on) == on) return;
  if (on)
    spdlog::info("draining: no new jobs are admitted, {} running", registry_.job_count());
  else
    spdlog::info("drain ended: admitting new jobs ({} running)", registry_.job_count());
}

}  // namespace zipper::forwarder
