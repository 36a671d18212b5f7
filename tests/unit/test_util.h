// Test helpers: a non-blocking frame client over proto::Link that collects
// received frames, and a poll()-driven pump that progresses several clients
// until a condition holds or a deadline passes (tests never block forever).
#pragma once

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/auth.h"
#include "proto/frame.h"
#include "proto/link.h"
#include "proto/site_hello.h"

namespace zipper::test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kWait{5000};  // generous upper bound for any single wait

/// Unsets the environment variables `names` for its lifetime and restores
/// their earlier values (or absence) when destroyed, so that tests of
/// environment-driven configuration neither see nor leak settings.
class EnvGuard {
 public:
  explicit EnvGuard(std::initializer_list<const char*> names) : names_(names.begin(), names.end()) {
    for (const auto& n : names_) {
      if (const char* v = std::getenv(n.c_str())) saved_[n] = v;
      ::unsetenv(n.c_str());
    }
  }
  ~EnvGuard() {
    for (const auto& n : names_) ::unsetenv(n.c_str());
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::string> saved_;
};

/// A received frame with a copy of its payload.
struct Frame {
  proto::FrameHeader hdr;
  std::vector<std::byte> payload;
  std::string text() const {
    return std::string(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
};

/// Deterministic payload pattern: byte i of a message seeded with `seed`.
inline std::byte pattern_byte(std::uint64_t seed, std::size_t i) {
  const std::uint64_t x = (seed * 0x9E3779B97F4A7C15ull) ^ (i * 0xBF58476D1CE4E5B9ull) ^ (i >> 7);
  return std::byte(static_cast<std::uint8_t>(x ^ (x >> 29) ^ (x >> 47)));
}
inline std::vector<std::byte> pattern(std::uint64_t seed, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(seed, i);
  return v;
}
/// Index of the first byte that differs from the pattern, or npos.
inline std::size_t pattern_mismatch(std::uint64_t seed, const std::vector<std::byte>& v,
                                    std::size_t offset = 0) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != pattern_byte(seed, offset + i)) return i;
  return std::string::npos;
}

/// Copies `bytes` into a freshly allocated payload.
inline proto::Payload make_payload(const std::vector<std::byte>& bytes) {
  proto::Payload p = proto::Payload::allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(p.bytes.data(), bytes.data(), bytes.size());
  return p;
}

// ---- job authentication ----------------------------------------------------

/// The secret tests use for job `job` (any fixed 32 bytes will do).
inline proto::auth::Secret test_secret(std::uint64_t job) {
  proto::auth::Secret s{};
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::byte((job >> (8 * (i % 8))) + i);
  return s;
}

/// The two-site shorthand's hello: rank `vrank` of job `job` in the sites
/// {np_low, np_high}, in the first when vrank < np_low.
inline proto::ConnectHello two_site_hello(std::uint64_t job, std::uint32_t vrank,
                                          std::uint32_t np_low, std::uint32_t np_high) {
  return {job, vrank, vrank < np_low ? 0u : 1u, {np_low, np_high}};
}

/// AUTH payload proving `secret` for challenge `ch` on `link` (a connection
/// that said `who`), as libmmpi computes it.
inline std::vector<std::byte> auth_payload(const proto::auth::Secret& secret,
                                           const proto::auth::ChallengePayload& ch,
                                           const proto::ConnectHello& who,
                                           const proto::Link& link) {
  return proto::auth::encode_auth(
      proto::auth::prove(secret, ch, who, link.local_address(), link.remote_address()).auth);
}

inline proto::FrameHeader header(proto::FrameType type, std::uint64_t job, std::uint32_t src,
                                 std::uint32_t dst);

/// A client end of a link. Not thread-safe; driven by Pump.
class FrameClient : public proto::RecvSink {
 public:
  explicit FrameClient(std::unique_ptr<proto::Link> link) : link_(std::move(link)) {}

  /// Connects to "tcp:HOST:PORT" (as printed by Listener::address()).
  static std::unique_ptr<FrameClient> connect(const std::string& address) {
    std::string why;
    auto ep = proto::parse_endpoint(address, &why);
    if (!ep) throw std::runtime_error(why);
    return std::make_unique<FrameClient>(proto::connect(*ep, 2000));
  }

  proto::Link& link() { return *link_; }
  int fd() const { return link_->poll_fd(); }

  /// Queues a frame (payload copied) and charges the credit it costs
  /// (every frame but HELLO, which precedes the grant).
  void send(proto::FrameHeader hdr, const std::vector<std::byte>& payload = {},
            std::function<void()> on_sent = {}) {
    hdr.payload_len = static_cast<std::uint32_t>(payload.size());
    proto::SiteHello hp;
    if (hdr.type == proto::FrameType::kHello && proto::decode_site_hello(payload, &hp))
      hello_ = proto::ConnectHello{hdr.job_id, hp.vrank, hp.site, hp.site_ranks};
    if (hdr.type != proto::FrameType::kHello && hdr.type != proto::FrameType::kAuth)
      credits_ -= static_cast<std::int64_t>(proto::credit_cost(hdr.payload_len));
    link_->post(proto::OutFrame{hdr, make_payload(payload), std::move(on_sent)});
    progress_send();
  }
  /// Queues a frame without touching the credit balance.
  void post(proto::OutFrame f) {
    link_->post(std::move(f));
    progress_send();
  }

  /// One non-blocking round of sending and receiving.
  void pump() {
    progress_send();
    if (done_) return;
    const auto st = link_->progress_recv(*this, 0);
    if (st == proto::LinkStatus::kClosed || st == proto::LinkStatus::kError) {
      done_ = true;
      final_status_ = st;
    }
  }
  void progress_send() {
    if (link_->progress_send() == proto::LinkStatus::kError) send_failed_ = true;
  }

  /// The peer closed (kClosed) or the link failed (kError).
  bool closed() const { return done_; }
  proto::LinkStatus final_status() const { return final_status_; }
  bool send_failed() const { return send_failed_; }

  /// Received frames (CREDIT frames are counted, not queued, unless keep_credit_frames).
  std::deque<Frame>& inbox() { return inbox_; }
  std::optional<Frame> pop() {
    if (inbox_.empty()) return std::nullopt;
    Frame f = std::move(inbox_.front());
    inbox_.pop_front();
    return f;
  }
  /// Credit balance (bytes): hello-ack grant plus returns minus what was sent.
  std::int64_t credits() const { return credits_; }
  std::uint64_t credits_returned() const { return credits_returned_; }
  std::size_t credit_frames() const { return credit_frames_; }
  void keep_credit_frames(bool keep) { keep_credit_frames_ = keep; }
  /// While set (the default), a CHALLENGE is answered at once with the
  /// proof of test_secret(job id) and not queued in the inbox.
  void set_auto_auth(bool on) { auto_auth_ = on; }
  /// The last challenge answered automatically.
  const std::optional<proto::auth::ChallengePayload>& challenge() const { return challenge_; }
  /// The last HELLO_ACK carried a valid key confirmation for the automatic
  /// answer (zipperd proved its host key, as libmmpi checks).
  bool hello_ack_confirmed() const { return confirmed_; }
  /// While set, payload_dest refuses every frame (the link reports kPaused).
  void set_paused(bool paused) { paused_ = paused; }

  // RecvSink
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& hdr) override {
    if (paused_) return std::nullopt;
    return proto::Payload::allocate(hdr.payload_len);
  }
  void on_frame(const proto::FrameHeader& hdr, proto::Payload payload) override {
    if (hdr.type == proto::FrameType::kChallenge && auto_auth_) {
      proto::auth::ChallengePayload ch;
      if (proto::auth::decode_challenge(payload.bytes, &ch)) {
        challenge_ = ch;
        proof_ = proto::auth::prove(test_secret(hello_.job_id), ch, hello_, link_->local_address(),
                                    link_->remote_address());
        send(header(proto::FrameType::kAuth, hello_.job_id, hello_.vrank, 0),
             proto::auth::encode_auth(proof_->auth));
        return;
      }
    }
    credits_ += hdr.credits;
    credits_returned_ += hdr.credits;
    if (hdr.type == proto::FrameType::kHelloAck) {
      proto::HelloAckPayload ack;
      if (proto::decode_hello_ack(payload.bytes, &ack)) {
        credits_ += ack.credits;
        confirmed_ =
            proof_ && proto::auth::check_confirm(proof_->job_key, proof_->auth.tag, ack.confirm);
      }
    }
    if (hdr.type == proto::FrameType::kCredit) {
      ++credit_frames_;
      if (!keep_credit_frames_) return;
    }
    inbox_.push_back(
        Frame{hdr, std::vector<std::byte>(payload.bytes.begin(), payload.bytes.end())});
  }

 private:
  std::unique_ptr<proto::Link> link_;
  std::deque<Frame> inbox_;
  std::int64_t credits_ = 0;
  std::uint64_t credits_returned_ = 0;
  std::size_t credit_frames_ = 0;
  bool keep_credit_frames_ = false;
  bool auto_auth_ = true;
  proto::ConnectHello hello_{};
  std::optional<proto::auth::ChallengePayload> challenge_;
  std::optional<proto::auth::ClientProof> proof_;
  bool confirmed_ = false;
  bool paused_ = false;
  bool done_ = false;
  bool send_failed_ = false;
  proto::LinkStatus final_status_ = proto::LinkStatus::kOk;
};

/// Progresses a set of clients until `pred()` holds or `timeout` passes.
/// Returns the final value of pred().
inline bool pump_until(const std::vector<FrameClient*>& clients, const std::function<bool()>& pred,
                       milliseconds timeout = kWait) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    for (auto* c : clients) c->pump();
    if (pred()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    std::vector<pollfd> fds;
    for (auto* c : clients) {
      short ev = 0;
      if (!c->closed()) ev |= POLLIN;
      if (c->link().send_pending()) ev |= POLLOUT;
      fds.push_back(pollfd{c->fd(), ev, 0});
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 20)));
  }
}

/// Progresses `clients` for `duration` regardless (to check nothing arrives).
inline void pump_for(const std::vector<FrameClient*>& clients, milliseconds duration) {
  pump_until(
      clients, [] { return false; }, duration);
}

/// Waits for the next frame on `c` (pumping all of `clients`, which should include c).
inline std::optional<Frame> next_frame(FrameClient& c, const std::vector<FrameClient*>& clients,
                                       milliseconds timeout = kWait) {
  if (!pump_until(
          clients, [&] { return !c.inbox().empty(); }, timeout))
    return std::nullopt;
  return c.pop();
}

// ---- frame builders --------------------------------------------------------

inline proto::FrameHeader header(proto::FrameType type, std::uint64_t job, std::uint32_t src,
                                 std::uint32_t dst) {
  proto::FrameHeader h;
  h.type = type;
  h.job_id = job;
  h.src = src;
  h.dst = dst;
  return h;
}

/// A HELLO payload (protocol 2, site_hello.h) of rank `vrank` in site
/// `site` of the table `sites` (its world: their sum, even where a hostile
/// table wraps it), followed by `proof_len` bytes of 0x5C.
inline std::vector<std::byte> site_hello_payload(std::uint32_t vrank, std::uint32_t site,
                                                 const std::vector<std::uint32_t>& sites,
                                                 std::uint32_t proof_len = 0) {
  proto::SiteHello h;
  h.vrank = vrank;
  h.site = site;
  h.site_ranks = sites;
  for (std::uint32_t r : sites) h.world += r;
  h.auth_len = proof_len;
  std::vector<std::byte> p(proto::site_hello_size(sites.size()) + proof_len, std::byte{0x5C});
  proto::encode_site_hello(h, p);
  return p;
}

/// The two-site shorthand: rank `vrank` of the table {np_low, np_high}, in
/// the first site when vrank < np_low.
inline std::vector<std::byte> hello_payload(std::uint32_t vrank, std::uint32_t np_low,
                                            std::uint32_t np_high) {
  return site_hello_payload(vrank, vrank < np_low ? 0 : 1, {np_low, np_high});
}

inline void send_hello(FrameClient& c, std::uint64_t job, std::uint32_t vrank, std::uint32_t np_low,
                       std::uint32_t np_high) {
  c.send(header(proto::FrameType::kHello, job, vrank, 0), hello_payload(vrank, np_low, np_high));
}

inline void send_site_hello(FrameClient& c, std::uint64_t job, std::uint32_t vrank,
                            std::uint32_t site, const std::vector<std::uint32_t>& sites) {
  c.send(header(proto::FrameType::kHello, job, vrank, 0), site_hello_payload(vrank, site, sites));
}

inline void send_eager(FrameClient& c, std::uint64_t job, std::uint32_t src, std::uint32_t dst,
                       std::int32_t tag, std::uint64_t seq, const std::vector<std::byte>& data) {
  auto h = header(proto::FrameType::kEager, job, src, dst);
  h.tag = tag;
  h.seq = seq;
  h.msg_len = data.size();
  c.send(h, data);
}

}  // namespace zipper::test
