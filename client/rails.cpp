#include "rails.h"

#include <algorithm>
#include <cstdio>

namespace zipper::client {

using Clock = std::chrono::steady_clock;
using proto::FrameHeader;
using proto::OutFrame;
using proto::Payload;

namespace {
std::vector<std::string> split_addresses(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    out.push_back(
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}
constexpr auto kFirstBackoff = std::chrono::milliseconds(500);
constexpr auto kMaxBackoff = std::chrono::milliseconds(8000);
constexpr int kRejoinConnectMs = 500;
}  // namespace

struct Rails::Rail {
  std::unique_ptr<Channel> ch;
  std::unique_ptr<Adapter> adapter;
  State state = State::kOut;
  Clock::time_point retry_at{}, joining_since{}, draining_since{};
  Clock::duration backoff = kFirstBackoff;
  bool retry = true;
};

// The FrameHandler of rail i: the engine's callbacks with the rail's index.
class Rails::Adapter final : public FrameHandler {
 public:
  Adapter(Rails& rails, RailHandler& h, int i) : rails_(rails), h_(h), i_(i) {}
  std::optional<Payload> payload_dest(const FrameHeader& hdr) override {
    return h_.payload_dest(i_, hdr);
  }
  void on_data_frame(const FrameHeader& hdr, Payload payload) override {
    h_.on_data_frame(i_, hdr, std::move(payload));
  }
  bool on_peer_gone(int vrank, const std::string& why) override {
    return h_.on_peer_gone(i_, vrank, why);
  }
  void on_link_failed() override {
    const Rail& r = *rails_.rails_[static_cast<std::size_t>(i_)];
    rails_.out_of_use(h_, i_, r.ch->error(), r.retry);
  }
  void on_draining() override {
    Rail& r = *rails_.rails_[static_cast<std::size_t>(i_)];
    if (rails_.size() == 1 || r.state != State::kUp) return;  // the only way across: keep it
    rails_.report("the forwarder at " + r.ch->address() +
                  " is draining for maintenance: moving traffic to the other forwarders");
    r.state = State::kDraining;
    r.draining_since = Clock::now();
    r.retry = false;
    h_.on_rail_draining(i_);
  }
  void on_abort(int from, int code) override {
    if (rails_.on_abort_) rails_.on_abort_(from, code);
  }

 private:
  Rails& rails_;
  RailHandler& h_;
  int i_;
};

Rails::Rails(const ClientConfig& cfg, int rank, int timeout_ms)
    : cfg_(cfg), rank_(rank), timeout_ms_(timeout_ms) {
  if (!cfg_.forwarder) return;
  const auto addrs = split_addresses(*cfg_.forwarder);
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    auto r = std::make_unique<Rail>();
    r->ch = std::make_unique<Channel>(cfg_, rank_, addrs[i], static_cast<int>(i));
    rails_.push_back(std::move(r));
  }
  eager_limit_ = cfg_.eager_limit;
  chunk_size_ = cfg_.chunk_size;
}

Rails::~Rails() = default;

void Rails::report(const std::string& msg) const {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", rank_, msg.c_str());
  std::fflush(stderr);
}

const std::string& Rails::address(int i) const {
  return rails_[static_cast<std::size_t>(i)]->ch->address();
}

bool Rails::connect(RailHandler& h) {
  std::string errors;
  int connected = 0;
  for (std::size_t i = 0; i < rails_.size(); ++i) {
    Rail& r = *rails_[i];
    r.adapter = std::make_unique<Adapter>(*this, h, static_cast<int>(i));
    // Every rank connects to the rails in the same order, so each zipperd's
    // JOB_READY comes while the ranks wait on that one.
    if (r.ch->connect(*r.adapter)) {
      r.state = State::kUp;
      ++connected;
      eager_limit_ = std::min(eager_limit_, r.ch->eager_limit());
      chunk_size_ = std::min(chunk_size_, r.ch->chunk_size());
    } else {
      errors += (errors.empty() ? "" : "; ") + r.ch->error();
      r.state = State::kOut;
      r.retry_at = Clock::now() + r.backoff;
      if (rails_.size() > 1)
        report("the forwarder at " + r.ch->address() + " is out of use (" + r.ch->error() +
               "); retrying it");
    }
  }
  if (connected == 0) error_ = errors;
  return connected > 0;
}

void Rails::close() {
  for (auto& r : rails_)
    if (r->state == State::kUp || r->state == State::kDraining) r->ch->close(*r->adapter);
}

bool Rails::up() const {
  for (int i = 0; i < size(); ++i)
    if (usable(i)) return true;
  return false;
}

bool Rails::preferred(int i) const {
  return rails_[static_cast<std::size_t>(i)]->state == State::kUp;
}

Rails::State Rails::state(int i) const { return rails_[static_cast<std::size_t>(i)]->state; }

bool Rails::usable(int i) const {
  const State s = rails_[static_cast<std::size_t>(i)]->state;
  return s == State::kUp || s == State::kDraining;
}

int Rails::health(int i) const {
  const State s = rails_[static_cast<std::size_t>(i)]->state;
  return s == State::kUp ? 1000 : s == State::kDraining ? 500 : 0;
}

int Rails::pair_rail(int local_index, std::uint64_t avoid) const {
  const int k = size();
  for (int step = 0; step < k; ++step) {
    const int i = (local_index + step) % k;
    if (preferred(i) && !(avoid >> i & 1)) return i;
  }
  // Only draining rails left: they still relay.
  for (int step = 0; step < k; ++step) {
    const int i = (local_index + step) % k;
    if (usable(i) && !(avoid >> i & 1)) return i;
  }
  return -1;
}

int Rails::chunk_rail(std::uint64_t avoid) {
  // Chunks are placed by offset, so any rail will do: the one whose turn it
  // is among those with credit left. A faster rail returns credit sooner and
  // so carries more chunks, in proportion to its rate (as UCX weights rails).
  const int k = size();
  for (int pass = 0; pass < 2; ++pass) {
    for (int step = 0; step < k; ++step) {
      const int i = (next_chunk_rail_ + step) % k;
      if ((avoid >> i & 1) || !(pass == 0 ? preferred(i) : usable(i))) continue;
      if (rails_[static_cast<std::size_t>(i)]->ch->free_credit() <= 0) continue;
      next_chunk_rail_ = (i + 1) % k;
      return i;
    }
  }
  return -1;
}

void Rails::send(int i, OutFrame f) { rails_[static_cast<std::size_t>(i)]->ch->send(std::move(f)); }

void Rails::flush() {
  for (auto& r : rails_)
    if (r->state != State::kOut) r->ch->flush();
}

void Rails::fail_soon(int i, std::string why) {
  Rail& r = *rails_[static_cast<std::size_t>(i)];
  if (r.state != State::kOut) r.ch->fail_soon(std::move(why));
}

void Rails::out_of_use(RailHandler& h, int i, const std::string& why, bool retry) {
  Rail& r = *rails_[static_cast<std::size_t>(i)];
  if (r.state == State::kOut) return;
  const bool was_joining = r.state == State::kJoining;
  r.state = State::kOut;
  r.retry = retry;
  r.retry_at = Clock::now() + r.backoff;
  r.backoff = std::min<Clock::duration>(r.backoff * 2, kMaxBackoff);
  if (was_joining) return;  // never carried traffic since it failed last
  if (up()) {
    report("the forwarder at " + r.ch->address() + " is out of use (" + why + "); " +
           (retry ? "retrying it" : "not retrying it") + ", traffic moves to the others");
    h.on_rail_failed(i);
    return;
  }
  if (!all_lost_) {
    all_lost_ = true;
    error_ = why;
    if (size() > 1) report("no forwarder left (the last, " + r.ch->address() + ": " + why + ")");
    h.on_link_failed();
  }
}

void Rails::try_rejoin(int i) {
  Rail& r = *rails_[static_cast<std::size_t>(i)];
  r.ch = std::make_unique<Channel>(cfg_, rank_, r.ch->address(), i);
  if (!r.ch->begin_connect(kRejoinConnectMs)) {
    r.retry_at = Clock::now() + r.backoff;
    r.backoff = std::min<Clock::duration>(r.backoff * 2, kMaxBackoff);
    return;
  }
  r.state = State::kJoining;
  r.joining_since = Clock::now();
}

void Rails::progress(RailHandler& h) {
  const auto now = Clock::now();
  for (std::size_t i = 0; i < rails_.size(); ++i) {
    Rail& r = *rails_[i];
    const int ri = static_cast<int>(i);
    switch (r.state) {
      case State::kOut:
        if (r.retry && !all_lost_ && size() > 1 && now >= r.retry_at) try_rejoin(ri);
        continue;
      case State::kJoining:
        r.ch->progress(*r.adapter);
        if (r.state != State::kJoining) continue;  // failed meanwhile
        if (r.ch->ready()) {
          r.state = State::kUp;
          r.backoff = kFirstBackoff;
          report("the forwarder at " + r.ch->address() + " is back in use");
          h.on_rail_rejoined(ri);
        } else if (now - r.joining_since > std::chrono::seconds(cfg_.connect_timeout_s)) {
          r.ch->fail_now(*r.adapter, "rejoin: not every rank came back");
        }
        continue;
      case State::kDraining:
      case State::kUp:
        r.ch->progress(*r.adapter);
        break;
    }
    if (!usable(ri)) continue;
    // A drained rail is left once a grace period let what crossed it arrive;
    // anything still unacknowledged then is resent (peer_transport.h).
    if (r.state == State::kDraining && now - r.draining_since > std::chrono::seconds(1) &&
        !r.ch->send_pending()) {
      r.ch->close(*r.adapter);
      out_of_use(h, ri, "drained", false);
      continue;
    }
    if (timeout_ms_ <= 0) continue;
    const auto timeout = std::chrono::milliseconds(timeout_ms_);
    if (r.ch->ping_outstanding()) {
      if (now - r.ch->ping() > timeout)
        r.ch->fail_now(*r.adapter, "no answer to PING within " + std::to_string(timeout_ms_) +
                                       " ms (MMPI_FORWARDER_TIMEOUT)");
    } else if (now - r.ch->last_heard() > timeout / 4) {
      r.ch->ping();
    }
  }
  if (size() > 1) flush_after_receive();
}

void Rails::abort(int code, std::chrono::milliseconds wait) {
  std::vector<Channel*> sending;
  for (auto& r : rails_)
    if ((r->state == State::kUp || r->state == State::kDraining) && r->ch->post_abort(code))
      sending.push_back(r->ch.get());
  const auto deadline = Clock::now() + wait;
  std::vector<pollfd> fds;
  while (!sending.empty() && Clock::now() < deadline) {
    std::erase_if(sending, [](Channel* c) { return c->abort_sent(); });
    fds.clear();
    for (Channel* c : sending)
      if (c->poll_fd() >= 0) fds.push_back(pollfd{c->poll_fd(), POLLOUT, 0});
    // POLLOUT says there is room, not that the bytes left: nap briefly.
    if (!sending.empty()) poll(fds.data(), fds.size(), 1);
  }
}

void Rails::flush_after_receive() {
  // A frame queued on rail j while rail i received (a CTS, ACK or FIN the
  // engine owes) goes out in this round, not when the rank next progresses.
  for (auto& r : rails_)
    if (r->state == State::kUp || r->state == State::kDraining) r->ch->flush();
}

void Rails::poll_fds(std::vector<pollfd>* out) const {
  out->clear();
  for (const auto& r : rails_) {
    if (r->state == State::kOut) continue;
    const int fd = r->ch->poll_fd();
    if (fd >= 0)
      out->push_back(
          pollfd{fd, static_cast<short>(POLLIN | (r->ch->send_pending() ? POLLOUT : 0)), 0});
  }
}

}  // namespace zipper::client
