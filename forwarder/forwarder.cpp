#include "forwarder.h"

#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "../proto/unique_fd.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;
using proto::LinkStatus;
using proto::OutFrame;
using proto::Payload;

namespace {
constexpr std::uint64_t kListenerId = 0;
constexpr std::uint64_t kWakeId = ~std::uint64_t{0};
constexpr std::uint32_t kPreHelloMaxPayload = 4096;  // bytes; hello plus a generous auth proof

void epoll_add(int ep, int fd, std::uint32_t events, std::uint64_t id) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) throw std::runtime_error("epoll_ctl(ADD) failed");
}

void wake(int efd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(efd, &one, sizeof one);
}
}  // namespace

struct Forwarder::Side {
  Side(std::string n, int i)
      : name(std::move(n)),
        index(i),
        epoll_rx(epoll_create1(EPOLL_CLOEXEC)),
        epoll_tx(epoll_create1(EPOLL_CLOEXEC)),
        wake_rx(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
        wake_tx(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!epoll_rx || !epoll_tx || !wake_rx || !wake_tx)
      throw std::runtime_error("cannot create epoll/eventfd");
    epoll_add(epoll_rx.get(), wake_rx.get(), EPOLLIN, kWakeId);
    epoll_add(epoll_tx.get(), wake_tx.get(), EPOLLIN, kWakeId);
  }
  std::shared_ptr<Connection> find(std::uint64_t id) {
    std::lock_guard lk(mu);
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second;
  }

  const std::string name;
  const int index;
  std::unique_ptr<proto::Listener> listener;
  proto::UniqueFd epoll_rx, epoll_tx, wake_rx, wake_tx;
  std::thread rx, tx;
  std::mutex mu;
  std::unordered_map<std::uint64_t, std::shared_ptr<Connection>> conns;
};

// Receives one connection's frames: charges credit and memory, then routes.
class Forwarder::RecvSinkImpl final : public proto::RecvSink {
 public:
  RecvSinkImpl(Forwarder& f, std::shared_ptr<Connection> c) : f_(f), conn_(std::move(c)) {}

  std::optional<Payload> payload_dest(const FrameHeader& hdr) override {
    if (fatal_) return std::nullopt;
    if (!conn_->job)
      return Payload::allocate(hdr.payload_len);  // hello: bounded by kPreHelloMaxPayload
    std::optional<BufferPool::Buffer> buf;
    if (hdr.payload_len > 0) {
      buf = f_.pool_->acquire(hdr.payload_len);
      if (!buf) return std::nullopt;  // park until a buffer frees up
    }
    const std::uint64_t cost = proto::credit_cost(hdr.payload_len);
    if (!conn_->credit.charge(cost)) {
      conn_->credit.release(cost);
      if (buf) f_.pool_->release(*buf);
      f_.send_error(
          conn_, ErrorCode::kCreditOverrun, conn_->vrank, hdr.seq,
          "client exceeded its credit of " + std::to_string(conn_->credit.granted()) + " frames");
      fatal_ = true;
      return std::nullopt;
    }
    // The owner returns the buffer and the credit when the last reference
    // (the destination's send queue, normally) drops the payload. It must
    // not keep the sender alive: two connections that die with frames queued
    // for each other would otherwise hold each other (and every buffer
    // queued on them) forever, leaking pool buffers, peers' credit and sockets.
    auto owner =
        std::shared_ptr<void>(buf ? static_cast<void*>(buf->data) : nullptr,
                              [&f = f_, w = std::weak_ptr<Connection>(conn_), buf, cost](void*) {
                                if (buf) f.release_buffer(*buf);
                                if (auto c = w.lock()) f.return_credit(c, cost);
                              });
    return Payload{std::span<std::byte>(buf ? buf->data : nullptr, hdr.payload_len),
                   std::move(owner)};
  }

  void on_frame(const FrameHeader& hdr, Payload payload) override {
    if (fatal_) return;
    f_.on_frame(conn_, hdr, std::move(payload));
    if (conn_->closed) fatal_ = true;
  }

  bool fatal() const { return fatal_; }
  void set_fatal() { fatal_ = true; }

 private:
  Forwarder& f_;
  std::shared_ptr<Connection> conn_;
  bool fatal_ = false;
};

Forwarder::Forwarder(Config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.listen.empty()) throw std::invalid_argument("at least one --listen is required");
  if (cfg_.max_frame < 1024 || cfg_.max_frame > proto::kMaxPayloadLimit)
    throw std::invalid_argument("max frame must be between 1 KiB and 64 MiB");
  if (cfg_.conn_credits < 2 || cfg_.conn_credits > kMaxConnCredits)
    throw std::invalid_argument("connection credits (" + std::to_string(cfg_.conn_credits) +
                                " frames) must be between 2 and " +
                                std::to_string(kMaxConnCredits));
  if (cfg_.pools.empty()) cfg_.pools = default_pool_classes(cfg_.max_memory, cfg_.max_frame);
  if (auto why = validate_pool_classes(cfg_.pools, cfg_.max_memory, cfg_.max_frame); !why.empty())
    throw std::invalid_argument(why);
  pool_ = std::make_unique<BufferPool>(cfg_.pools);
}

void Forwarder::release_buffer(const BufferPool::Buffer& b) {
  pool_->release(b);
  if (parked_.load(std::memory_order_relaxed) > 0) wake_all_receivers();
}

Forwarder::~Forwarder() { stop(); }

void Forwarder::start() {
  // Announced before any link exists: a verbs device registers each region
  // once, at its first use, so relaying a chunk costs no registration.
  for (const BufferPool::Region& r : pool_->regions())
    pool_regions_.push_back(proto::register_long_lived_region(r.addr, r.bytes));
  for (std::size_t i = 0; i < cfg_.listen.size(); ++i) {
    auto side = std::make_unique<Side>(cfg_.listen[i].name, static_cast<int>(i));
    side->listener = proto::listen(cfg_.listen[i].endpoint);
    epoll_add(side->epoll_rx.get(), side->listener->poll_fd(), EPOLLIN, kListenerId);
    spdlog::info("listening on side {} at {}", side->name, side->listener->address());
    sides_.push_back(std::move(side));
  }
  spdlog::info(
      "flow control: {} frames of credit per connection, frames up to {} bytes; payload "
      "pools (at most {} bytes): {}",
      cfg_.conn_credits, cfg_.max_frame, cfg_.max_memory, pool_->describe());
  started_ = true;
  for (auto& s : sides_) {
    s->rx = std::thread([this, side = s.get()] { recv_loop(*side); });
    s->tx = std::thread([this, side = s.get()] { send_loop(*side); });
  }
}

void Forwarder::stop() {
  if (!started_.exchange(false)) return;
  stopping_ = true;
  for (auto& s : sides_) {
    wake(s->wake_rx.get());
    wake(s->wake_tx.get());
  }
  for (auto& s : sides_) {
    if (s->rx.joinable()) s->rx.join();
    if (s->tx.joinable()) s->tx.join();
  }
  for (auto& s : sides_) {
    std::vector<std::shared_ptr<Connection>> all;
    {
      std::lock_guard lk(s->mu);
      for (auto& [id, c] : s->conns) all.push_back(c);
    }
    for (auto& c : all) close_conn(c, "zipperd shutting down");
  }
  const Stats st = stats();
  spdlog::info(
      "stopped: {} connections, {} frames / {} payload bytes relayed, {} protocol errors, "
      "peak pool use {} of {} bytes, {} memory registrations",
      st.connections, st.frames_relayed, st.bytes_relayed, st.protocol_errors, st.peak_memory,
      st.pool_bytes, st.memory_registrations);
}

std::vector<std::string> Forwarder::addresses() const {
  std::vector<std::string> out;
  for (const auto& s : sides_) out.push_back(s->listener->address());
  return out;
}

Stats Forwarder::stats() const {
  Stats st;
  st.frames_relayed = frames_relayed_.load();
  st.bytes_relayed = bytes_relayed_.load();
  st.connections = connections_.load();
  st.protocol_errors = protocol_errors_.load();
  st.peak_memory = pool_->peak_bytes();
  st.pool_bytes = pool_->total_bytes();
  st.memory_registrations = proto::memory_registrations();
  st.pools = pool_->stats();
  return st;
}

void Forwarder::wake_all_receivers() {
  for (auto& s : sides_) wake(s->wake_rx.get());
}

void Forwarder::recv_loop(Side& side) {
  epoll_event evs[64];
  auto last_sweep = std::chrono::steady_clock::now();
  // After traffic, poll without sleeping for a few rounds: the next frame of
  // a ping-pong usually follows within microseconds, and a sleeping thread
  // pays a wake-up on every hop. sched_yield keeps the core free for the
  // ranks when they need it.
  constexpr int kSpinRounds = 200;
  int spin = 0;
  while (!stopping_) {
    int n = 0;
    if (spin > 0) {
      n = epoll_wait(side.epoll_rx.get(), evs, 64, 0);
      if (n == 0) {
        --spin;
        sched_yield();
        continue;
      }
    } else {
      n = epoll_wait(side.epoll_rx.get(), evs, 64, 500);
    }
    if (n > 0) spin = kSpinRounds;
    for (int i = 0; i < n && !stopping_; ++i) {
      const std::uint64_t id = evs[i].data.u64;
      if (id == kListenerId) {
        accept_all(side);
      } else if (id == kWakeId) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(side.wake_rx.get(), &v, sizeof v);
        std::vector<std::shared_ptr<Connection>> parked;
        {
          std::lock_guard lk(side.mu);
          for (auto& [cid, c] : side.conns)
            if (c->parked) parked.push_back(c);
        }
        for (auto& c : parked) progress_conn(side, c);
      } else if (auto conn = side.find(id)) {
        progress_conn(side, conn);
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sweep > std::chrono::seconds(1)) {
      last_sweep = now;
      std::vector<std::shared_ptr<Connection>> silent;
      {
        std::lock_guard lk(side.mu);
        for (auto& [cid, c] : side.conns)
          if (!c->job && now - c->accepted > std::chrono::milliseconds(cfg_.hello_timeout_ms))
            silent.push_back(c);
      }
      for (auto& c : silent) close_conn(c, "no hello within the hello timeout");
    }
  }
}

void Forwarder::send_loop(Side& side) {
  epoll_event evs[64];
  while (!stopping_) {
    const int n = epoll_wait(side.epoll_tx.get(), evs, 64, 500);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = evs[i].data.u64;
      if (id == kWakeId) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(side.wake_tx.get(), &v, sizeof v);
        continue;
      }
      if (auto conn = side.find(id)) {
        if (conn->link->progress_send() == LinkStatus::kError) {
          spdlog::warn("send to {} failed: {}", conn->name(), conn->link->error());
          conn->link->shutdown();  // its receive thread sees the error and closes it
        }
      }
    }
  }
}

void Forwarder::accept_all(Side& side) {
  const auto log_refused = [&] {
    for (const auto& r : side.listener->take_refused()) {
      ++protocol_errors_;
      spdlog::warn("side {}: refused a connection from {}", side.name, r);
    }
  };
  while (auto link = side.listener->accept()) {
    log_refused();
    const std::uint64_t id = next_conn_id_++;
    auto conn = std::make_shared<Connection>(id, side.index, std::move(link), cfg_.conn_credits);
    conn->link->set_max_payload(kPreHelloMaxPayload);
    // Piggyback returned credit on every frame to this client; a standalone
    // CREDIT frame that finds nothing left to return is dropped.
    conn->link->set_header_hook([c = conn.get()](FrameHeader& h) {
      if (h.type == FrameType::kCredit) c->credit_frame_queued = false;
      const std::uint64_t r = c->credit.take_returnable();
      h.credits = static_cast<std::uint32_t>(r);
      return !(h.type == FrameType::kCredit && r == 0);
    });
    {
      std::lock_guard lk(side.mu);
      side.conns.emplace(id, conn);
    }
    ++connections_;
    spdlog::debug("side {}: accepted {}", side.name, conn->link->peer());
    const int fd = conn->link->poll_fd();
    epoll_add(side.epoll_tx.get(), fd, EPOLLOUT | EPOLLET, id);
    epoll_add(side.epoll_rx.get(), fd, EPOLLIN | EPOLLRDHUP | EPOLLET, id);
  }
  log_refused();
}

void Forwarder::progress_conn(Side& side, const std::shared_ptr<Connection>& conn) {
  (void)side;
  if (conn->closed) return;
  RecvSinkImpl sink(*this, conn);
  LinkStatus st = conn->link->progress_recv(sink, 0);
  if (st == LinkStatus::kPaused && !sink.fatal() && !conn->parked) {
    // Out of memory. Count the connection as parked before trying once more:
    // memory released between the failed reservation and now woke nobody (no
    // receiver was parked yet), and its socket may never signal again.
    conn->parked = true;
    ++parked_;
    st = conn->link->progress_recv(sink, 0);
  }
  const bool was_parked = conn->parked;
  conn->parked = st == LinkStatus::kPaused && !sink.fatal();
  if (conn->parked != was_parked) parked_ += conn->parked ? 1 : -1;
  if (sink.fatal()) {
    ++protocol_errors_;
    close_conn(conn, "protocol violation");
  } else if (st == LinkStatus::kClosed) {
    close_conn(conn, conn->said_bye ? "closed" : "closed without BYE");
  } else if (st == LinkStatus::kError) {
    const proto::LinkError err = conn->link->last_error();
    if (err.kind == proto::LinkErrorKind::kMalformed) {
      ++protocol_errors_;
      send_error(conn, ErrorCode::kMalformed, conn->vrank, 0, err.message);
    }
    close_conn(conn, err.message);
  }
}

void Forwarder::close_conn(const std::shared_ptr<Connection>& conn, const std::string& why) {
  if (conn->closed.exchange(true)) return;
  Side& side = *sides_[conn->side];
  const int fd = conn->link->poll_fd();
  epoll_ctl(side.epoll_rx.get(), EPOLL_CTL_DEL, fd, nullptr);
  epoll_ctl(side.epoll_tx.get(), EPOLL_CTL_DEL, fd, nullptr);
  if (conn->parked) {
    conn->parked = false;
    --parked_;
  }
  // Give queued frames (e.g. an error report) a last chance, then close.
  conn->link->progress_send();
  conn->link->shutdown();
  {
    std::lock_guard lk(side.mu);
    side.conns.erase(conn->id);
  }
  if (conn->job) {
    const bool orderly = conn->said_bye;
    if (orderly)
      spdlog::debug("connection of {} ended: {}", conn->name(), why);
    else
      spdlog::warn("connection of {} ended: {}", conn->name(), why);
    registry_.leave(conn);
    if (!orderly) {
      for (auto& other : conn->job->members())
        send_error(other, ErrorCode::kPeerGone, conn->vrank, 0,
                   "rank " + std::to_string(conn->vrank) + " disconnected: " + why);
    }
  } else {
    spdlog::info("connection from {} ended before hello: {}", conn->link->peer(), why);
  }
}

void Forwarder::send_control(const std::shared_ptr<Connection>& conn, OutFrame frame) {
  if (conn->closed && frame.hdr.type != FrameType::kError) return;
  conn->link->post(std::move(frame));
  if (conn->link->progress_send() == LinkStatus::kError) conn->link->shutdown();
}

void Forwarder::send_error(const std::shared_ptr<Connection>& conn, ErrorCode code,
                           std::uint32_t about_rank, std::uint64_t seq, const std::string& text) {
  OutFrame f;
  f.hdr.type = FrameType::kError;
  f.hdr.flags = static_cast<std::uint8_t>(code);
  f.hdr.job_id = conn->job ? conn->job->id() : 0;
  f.hdr.src = about_rank;
  f.hdr.dst = conn->vrank;
  f.hdr.seq = seq;
  const std::string msg = text.substr(0, 1024);
  f.payload = Payload::allocate(msg.size());
  std::memcpy(f.payload.bytes.data(), msg.data(), msg.size());
  send_control(conn, std::move(f));
}

void Forwarder::return_credit(const std::shared_ptr<Connection>& conn, std::uint64_t cost) {
  conn->credit.release(cost);
  if (conn->closed) return;
  // Return credit in batches of a quarter of the grant; smaller amounts ride
  // on the next frame to this client. The grant is at least twice the largest
  // frame (checked at start), so a client that is blocked on credit always has
  // more than a quarter of the grant outstanding and gets it back.
  if (conn->credit.returnable() < conn->credit.granted() / 4) return;
  if (conn->credit_frame_queued.exchange(true)) return;
  OutFrame f;
  f.hdr.type = FrameType::kCredit;
  f.hdr.job_id = conn->job ? conn->job->id() : 0;
  f.hdr.dst = conn->vrank;
  f.urgent = true;  // the client may be blocked on it (full duplex)
  send_control(conn, std::move(f));
}

void Forwarder::on_hello(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         const Payload& payload) {
  proto::HelloPayload hello;
  if (!proto::decode_hello(payload.bytes, &hello)) {
    send_error(conn, ErrorCode::kBadHello, 0, 0, "malformed hello payload");
    return close_conn(conn, "malformed hello");
  }
  auto r = registry_.join(hdr.job_id, hello.np_low, hello.np_high, hello.vrank, conn);
  if (!r.job) {
    send_error(conn, ErrorCode::kBadHello, hello.vrank, 0, r.error);
    return close_conn(conn, "hello refused: " + r.error);
  }
  conn->job = r.job;
  conn->vrank = hello.vrank;
  conn->link->set_max_payload(cfg_.max_frame);
  spdlog::info("job {}: rank {} of {}+{} connected from {}", hdr.job_id, hello.vrank, hello.np_low,
               hello.np_high, conn->link->peer());
  OutFrame ack;
  ack.hdr.type = FrameType::kHelloAck;
  ack.hdr.job_id = hdr.job_id;
  ack.hdr.dst = hello.vrank;
  ack.payload = Payload::allocate(proto::kHelloAckSize);
  proto::encode_hello_ack({cfg_.conn_credits, cfg_.max_frame},
                          ack.payload.bytes.first<proto::kHelloAckSize>());
  send_control(conn, std::move(ack));
  auto ready = [&](const std::shared_ptr<Connection>& c) {
    OutFrame f;
    f.hdr.type = FrameType::kJobReady;
    f.hdr.job_id = hdr.job_id;
    f.hdr.dst = c->vrank;
    send_control(c, std::move(f));
  };
  if (r.now_ready) {
    spdlog::info("job {}: all {} ranks connected", hdr.job_id, r.job->size());
    for (auto& c : r.job->members()) ready(c);
  } else if (r.ready) {
    ready(conn);
  }
}

void Forwarder::on_frame(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         Payload payload) {
  if (!conn->job) {
    if (hdr.type == FrameType::kHello) return on_hello(conn, hdr, payload);
    send_error(conn, ErrorCode::kUnknownJob, 0, hdr.seq, "the first frame must be HELLO");
    ++protocol_errors_;
    return close_conn(conn,
                      std::string("first frame was ") + std::string(proto::to_string(hdr.type)));
  }
  switch (hdr.type) {
    case FrameType::kEager:
    case FrameType::kRts:
    case FrameType::kCts:
    case FrameType::kChunk:
      break;
    case FrameType::kBye:
      conn->said_bye = true;
      return;
    default:
      ++protocol_errors_;
      send_error(conn, ErrorCode::kMalformed, conn->vrank, hdr.seq,
                 std::string("unexpected ") + std::string(proto::to_string(hdr.type)) +
                     " frame from a client");
      return close_conn(conn, "unexpected frame type");
  }
  if (hdr.job_id != conn->job->id() || hdr.src != conn->vrank) {
    ++protocol_errors_;
    send_error(conn, ErrorCode::kUnknownJob, conn->vrank, hdr.seq,
               "frame claims job " + std::to_string(hdr.job_id) + " rank " +
                   std::to_string(hdr.src) + " on a connection of job " +
                   std::to_string(conn->job->id()) + " rank " + std::to_string(conn->vrank));
    return close_conn(conn, "spoofed job or rank");
  }
  auto dest = conn->job->lookup(hdr.dst);
  if (!dest || dest->closed) {
    send_error(conn, ErrorCode::kPeerGone, hdr.dst, hdr.seq,
               "rank " + std::to_string(hdr.dst) + " is not connected");
    return;  // payload dropped here: its credit goes back to the sender
  }
  ++frames_relayed_;
  bytes_relayed_ += hdr.payload_len;
  // A CTS lets the opposite direction's rendezvous go on: it must not wait
  // behind the data queued for this client (it is matched by sequence
  // number, not by order, so overtaking is safe).
  OutFrame out{hdr, std::move(payload), {}};
  out.urgent = hdr.type == FrameType::kCts;
  dest->link->post(std::move(out));
  // Cut-through: write now from this thread; the destination side's send
  // thread finishes whatever the socket does not take.
  if (dest->link->progress_send() == LinkStatus::kError) dest->link->shutdown();
}

}  // namespace zipper::forwarder
