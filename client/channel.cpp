#include "channel.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "../proto/munge.h"
#include "../proto/site_hello.h"

namespace zipper::client {

using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

namespace {
bool is_data(FrameType t) {
  return t == FrameType::kEager || t == FrameType::kRts || t == FrameType::kCts ||
         t == FrameType::kChunk;
}
}  // namespace

// Receives frames from zipperd; data frames go to the engine, whose payloads
// land straight in the user's buffer when it is known and contiguous.
class Channel::Sink final : public proto::RecvSink {
 public:
  Sink(Channel& ch, FrameHandler& h) : ch_(ch), h_(h) {}
  std::optional<Payload> payload_dest(const FrameHeader& hdr) override {
    if (ch_.failing() || !is_data(hdr.type)) return Payload::allocate(hdr.payload_len);
    return h_.payload_dest(hdr);
  }
  void on_frame(const FrameHeader& hdr, Payload payload) override {
    ch_.on_frame(h_, hdr, std::move(payload));
  }

 private:
  Channel& ch_;
  FrameHandler& h_;
};

void Channel::report(const std::string& msg) const {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", rank_, msg.c_str());
  std::fflush(stderr);
}

proto::ConnectHello Channel::hello() const {
  return {cfg_.job_id, static_cast<std::uint32_t>(rank_), cfg_.site, cfg_.site_ranks};
}

std::string Channel::link_failure() const {
  const proto::LinkError e = link_->last_error();
  // An end of another protocol version: one line naming both.
  if (e.kind == proto::LinkErrorKind::kVersionMismatch)
    return proto::version_mismatch(e.peer_version, proto::kVersion, "zipperd at " + address_,
                                   "libmmpi");
  return e.message;
}

bool Channel::begin_connect(int connect_ms) {
  std::string why;
  auto ep = proto::parse_endpoint(address_, &why);
  if (!ep) {
    error_ = "MMPI_FORWARDER: " + why;
    return false;
  }
  const proto::ConnectHello who = hello();
  try {
    link_ = proto::connect(*ep, connect_ms, &who, cfg_.verbs);
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
  last_heard_ = std::chrono::steady_clock::now();
  link_->stop_at_short_read(true);  // one read per small frame, not two
  if (!link_->hello_delivered()) {
    OutFrame hello;
    hello.hdr.type = FrameType::kHello;
    hello.hdr.job_id = cfg_.job_id;
    hello.hdr.src = who.vrank;
    proto::SiteHello p;
    p.vrank = who.vrank;
    p.site = who.site;
    p.site_ranks = who.site_ranks;
    for (std::uint32_t r : p.site_ranks) p.world += r;
    hello.payload = Payload::allocate(proto::site_hello_size(p.site_ranks.size()));
    proto::encode_site_hello(p, hello.payload.bytes);
    link_->post(std::move(hello));
  }
  return true;
}

bool Channel::connect(FrameHandler& h) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(cfg_.connect_timeout_s);
  if (!begin_connect(cfg_.connect_timeout_s * 1000)) return false;
  // One round trip per job, not per message: wait until every rank of both
  // clusters has connected, so no frame can be addressed to a rank not yet there.
  while (link_ && !job_ready_) {
    progress(h);
    if (std::chrono::steady_clock::now() > deadline) {
      error_ = "timed out after " + std::to_string(cfg_.connect_timeout_s) +
               " s waiting for all ranks of job " + std::to_string(cfg_.job_id) +
               " to connect to zipperd at " + address_ +
               (hello_acked_ ? "" : " (no answer to hello)");
      return false;
    }
    if (link_) {
      pollfd p{link_->poll_fd(), POLLIN, 0};
      poll(&p, 1, 10);
    }
  }
  return link_ != nullptr;  // error_ says why not
}

// zipperd's CHALLENGE after our HELLO: first the host key it shows must be
// the pinned one (a listener with another key gets nothing more), then the
// proof for this connection (proto/auth.h): the job key for that host key,
// sealed to it, and a tag binding both nonces and the connection's ends.
void Channel::answer_challenge(const FrameHeader& h, const Payload& payload) {
  namespace auth = proto::auth;
  auth::ChallengePayload ch;
  if (hello_acked_ || proof_ || !cfg_.job_secret || !auth::decode_challenge(payload.bytes, &ch))
    return fail_soon("unexpected or malformed CHALLENGE from the forwarder at " + address_);
  const auto pinned = cfg_.pins.lookup(address_, static_cast<std::size_t>(index_));
  if (pinned && *pinned != ch.server_key)
    return fail_soon("the forwarder at " + address_ + " presented host key " +
                     auth::to_hex(ch.server_key) + ", not the pinned key " + auth::to_hex(*pinned) +
                     ": refusing it (another process on zipperd's address, or zipperd's key "
                     "changed: check `zipperd --print-host-key` on the bridge node)");
  if (!pinned && cfg_.pins.strict)
    return fail_soon("no host key pinned for the forwarder at " + address_ +
                     " (MMPI_FORWARDER_KEYS, MMPI_KNOWN_FORWARDERS" +
                     (cfg_.pins.known_file.empty() ? "" : " = " + cfg_.pins.known_file) +
                     ") and the key check is strict (the default): refusing it; pin zipperd's key "
                     "(`zipperd --print-host-key`, `zipperctl host-key`) or set "
                     "MMPI_FORWARDER_KEY_CHECK=accept to use it unauthenticated");
  // Every rank says so: a rank on another node may talk to
  // another listener than rank 0 did.
  if (!pinned)
    report("warning: rank " + std::to_string(rank_) + ": MMPI_FORWARDER_KEY_CHECK=accept: the " +
           "forwarder at " + address_ + " is not authenticated (no host key pinned; it shows " +
           auth::to_hex(ch.server_key) + "); pin it with MMPI_FORWARDER_KEYS or known_forwarders");
  const proto::ConnectHello who = hello();
  auto proof =
      auth::prove(*cfg_.job_secret, ch, who, link_->local_address(), link_->remote_address());
  if (h.flags & auth::kWantMunge) {
    std::string why;
    auto cred = auth::munge_credential(ch.nonce, cfg_.munge_socket, &why);
    if (!cred) return fail_soon(why);
    proof.auth.munge_cred = std::move(*cred);
  }
  const auto bytes = auth::encode_auth(proof.auth);
  proof_ = std::move(proof);
  OutFrame f;
  f.hdr.type = FrameType::kAuth;
  f.hdr.job_id = cfg_.job_id;
  f.hdr.src = who.vrank;
  f.payload = Payload::allocate(bytes.size());
  std::memcpy(f.payload.bytes.data(), bytes.data(), bytes.size());
  link_->post(std::move(f));  // before the credit grant, like HELLO
  if (link_->progress_send() == proto::LinkStatus::kError)
    fail_soon("cannot send AUTH to the forwarder at " + address_ + ": " + link_->error());
}

void Channel::close(FrameHandler& h) {
  if (!link_) return;
  // Let queued frames (and the BYE) reach zipperd before closing.
  OutFrame bye;
  bye.hdr.type = FrameType::kBye;
  send(std::move(bye));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (link_ && (waiting_for_credit() || link_->send_pending()) &&
         std::chrono::steady_clock::now() < deadline) {
    progress(h);
    pollfd p{link_ ? link_->poll_fd() : -1, POLLIN | POLLOUT, 0};
    poll(&p, 1, 1);
  }
  if (link_ && (link_->send_pending() || waiting_for_credit()))
    report("finalize: frames still queued to zipperd after 30 s; closing anyway");
  // Half-close, then read until zipperd closes its side: closing with
  // unread input (late credit frames) would send a reset, and a reset
  // discards our own last frames still queued in the kernel.
  if (link_) {
    link_->shutdown_send();
    const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Sink sink(*this, h);
    while (std::chrono::steady_clock::now() < drain_deadline) {
      const auto st = link_->progress_recv(sink, 0);
      if (st == proto::LinkStatus::kClosed || st == proto::LinkStatus::kError) break;
      pollfd p{link_->poll_fd(), POLLIN, 0};
      poll(&p, 1, 10);
    }
  }
  link_.reset();
}

void Channel::begin_close() {
  if (closing_) return;
  closing_ = true;
  if (!link_) return;
  OutFrame bye;
  bye.hdr.type = FrameType::kBye;
  send(std::move(bye));
  flush();
  half_close_when_sent();  // no event may come to progress() once all is out
}

void Channel::half_close_when_sent() {
  // Only once the BYE is out: zipperd then reads a clean end of stream
  // after it and closes its side, which ends the link in progress().
  if (link_ && closing_ && !half_closed_ && !waiting_for_credit() && !link_->send_pending()) {
    link_->shutdown_send();
    half_closed_ = true;
  }
}

void Channel::send(OutFrame f) {
  if (!link_) return;
  f.hdr.job_id = cfg_.job_id;
  f.hdr.src = static_cast<std::uint32_t>(rank_);
  // A CTS is matched by sequence number, not by order, and the peer's data
  // waits on it: it overtakes data frames waiting for credit (and, urgent,
  // those queued in the link), or a full-duplex exchange would run one
  // direction at a time. Everything else keeps its order (non-overtaking).
  // A PING is sent the same way, so that a busy link is probed too.
  const bool control = f.hdr.type == FrameType::kCts || f.hdr.type == FrameType::kPing;
  f.urgent = control;
  auto& wait = control ? control_wait_ : credit_wait_;
  const std::uint64_t cost = proto::credit_cost(static_cast<std::uint32_t>(f.payload.bytes.size()));
  if (wait.empty() && (control || control_wait_.empty()) && credits_ >= cost) {
    credits_ -= cost;
    link_->post(std::move(f));
  } else {
    wait.push_back(std::move(f));
  }
}

std::chrono::steady_clock::time_point Channel::ping() {
  if (!ping_out_ && link_ && hello_acked_) {
    OutFrame f;
    f.hdr.type = FrameType::kPing;
    f.hdr.seq = ++ping_seq_;
    ping_out_ = true;
    ping_sent_ = std::chrono::steady_clock::now();
    send(std::move(f));
  }
  return ping_sent_;
}

bool Channel::post_abort(int code) {
  if (!link_ || !hello_acked_ || failing()) return false;
  OutFrame f;
  f.hdr.type = FrameType::kAbort;
  f.hdr.job_id = cfg_.job_id;
  f.hdr.src = static_cast<std::uint32_t>(rank_);
  f.hdr.tag = code;
  f.urgent = true;
  link_->post(std::move(f));
  return abort_sent();
}

bool Channel::abort_sent() {
  if (!link_) return true;
  if (link_->progress_send() == proto::LinkStatus::kError) return true;
  if (link_->send_pending()) return false;
  // A verbs send completes once the peer has it; a TCP socket's bytes may
  // still wait in the kernel, and the reset of an exiting process drops them.
  int unsent = 0;
  return ::ioctl(link_->poll_fd(), SIOCOUTQ, &unsent) != 0 || unsent == 0;
}

void Channel::flush_credit_wait() {
  for (auto* wait : {&control_wait_, &credit_wait_}) {
    while (link_ && !wait->empty()) {
      auto& f = wait->front();
      const std::uint64_t cost =
          proto::credit_cost(static_cast<std::uint32_t>(f.payload.bytes.size()));
      if (credits_ < cost) return;
      credits_ -= cost;
      link_->post(std::move(f));
      wait->pop_front();
    }
  }
}

void Channel::flush() {
  if (!link_) return;
  flush_credit_wait();
  if (link_->progress_send() == proto::LinkStatus::kError) pending_failure_ = link_->error();
}

void Channel::fail_soon(std::string why) {
  if (pending_failure_.empty()) pending_failure_ = std::move(why);
}

void Channel::on_frame(FrameHandler& h, const FrameHeader& hdr, Payload payload) {
  if (failing()) return;
  // Until a HELLO_ACK proves the host key, the listener is nobody: it may
  // only challenge, confirm or refuse.
  if (!hello_acked_ && hdr.type != FrameType::kChallenge && hdr.type != FrameType::kHelloAck &&
      hdr.type != FrameType::kError)
    return fail_soon("the forwarder at " + address_ + " sent " +
                     std::string(proto::to_string(hdr.type)) + " before admitting this rank");
  credits_ += hdr.credits;
  last_heard_ = std::chrono::steady_clock::now();
  switch (hdr.type) {
    case FrameType::kPing:
      if (!(hdr.flags & proto::kPong) || hdr.seq != ping_seq_)
        return fail_soon("unexpected PING answer from the forwarder at " + address_);
      ping_out_ = false;
      return;
    case FrameType::kHelloAck: {
      proto::HelloAckPayload ack;
      if (hello_acked_ || !proto::decode_hello_ack(payload.bytes, &ack))
        return fail_soon("unexpected or malformed HELLO_ACK from the forwarder at " + address_);
      if (!proof_ || !proto::auth::check_confirm(proof_->job_key, proof_->auth.tag, ack.confirm))
        return fail_soon("the forwarder at " + address_ +
                         " did not prove its host key (no valid key confirmation in HELLO_ACK): "
                         "it is not the zipperd it claimed to be");
      credits_ = ack.credits;
      const std::uint64_t max_chunk = ack.max_payload;
      eager_limit_ = std::min(eager_limit_, max_chunk);
      chunk_size_ = std::min(chunk_size_, max_chunk);
      hello_acked_ = true;
      return;
    }
    case FrameType::kChallenge:
      return answer_challenge(hdr, payload);
    case FrameType::kJobReady:
      job_ready_ = true;
      return;
    case FrameType::kCredit:
      return;
    case FrameType::kAbort:
      return h.on_abort(static_cast<int>(hdr.src), hdr.tag);
    case FrameType::kError: {
      const std::string text(reinterpret_cast<const char*>(payload.bytes.data()),
                             payload.bytes.size());
      const auto code = static_cast<proto::ErrorCode>(hdr.flags);
      if (code == proto::ErrorCode::kPeerGone && h.on_peer_gone(static_cast<int>(hdr.src), text))
        return;
      if (code == proto::ErrorCode::kDraining) return h.on_draining();
      return fail_soon("the forwarder at " + address_ + " reported " +
                       std::string(proto::to_string(code)) + ": " + text);
    }
    default:
      if (is_data(hdr.type)) return h.on_data_frame(hdr, std::move(payload));
      return fail_soon("unexpected " + std::string(proto::to_string(hdr.type)) +
                       " frame from zipperd");
  }
}

void Channel::failed(FrameHandler& h, const std::string& why) {
  if (!link_) return;
  error_ = why;
  report("link to zipperd failed: " + why);
  link_->shutdown();
  link_.reset();  // queued frames are dropped; the engine fails their requests
  credit_wait_.clear();
  control_wait_.clear();
  h.on_link_failed();
}

void Channel::progress(FrameHandler& h) {
  if (link_) {
    Sink sink(*this, h);
    const auto st = link_->progress_recv(sink, 0);
    // Failures seen inside the receive callbacks are acted on only now,
    // outside the link's own call.
    if (failing())
      failed(h, std::exchange(pending_failure_, {}));
    else if (st == proto::LinkStatus::kClosed && half_closed_)
      link_.reset();  // begin_close() done: zipperd closed its side after our BYE
    else if (st == proto::LinkStatus::kClosed)
      failed(h, "zipperd closed the connection");
    else if (st == proto::LinkStatus::kError)
      failed(h, link_failure());
  }
  if (link_) {
    flush_credit_wait();
    if (link_->progress_send() == proto::LinkStatus::kError) failed(h, link_failure());
  }
  half_close_when_sent();
}

}  // namespace zipper::client
