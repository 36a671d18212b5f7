#include "forwarder.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "../proto/munge.h"
#include "../proto/payload_pipe.h"
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
// Bytes of payload a connection may send before admission: a HELLO, or an
// AUTH with a MUNGE credential.
constexpr std::uint32_t kPreHelloMaxPayload = 4096;

void epoll_add(int ep, int fd, std::uint32_t events, std::uint64_t id) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) throw std::runtime_error("epoll_ctl(ADD) failed");
}

// splice() into a socket has no MSG_NOSIGNAL: a destination that went away
// would raise SIGPIPE, which kills a process that does not ignore it (the
// unit tests embed the forwarder). Blocked on the relay threads, it stays
// pending and the call returns EPIPE.
void block_sigpipe() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

void wake(int efd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(efd, &one, sizeof one);
}

// Dead peers (a powered-off node, a cut cable) are found by the kernel even
// on a link that carries nothing. Fails harmlessly (ENOTSOCK) on links whose
// poll fd is not a socket (verbs).
void set_keepalive(int fd, int idle_s) {
  if (idle_s <= 0) return;
  int one = 1, idle = idle_s, intvl = std::max(1, idle_s / 6), count = 3;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) != 0) return;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}
}  // namespace

template <typename... Args>
void Forwarder::warn_limited(const std::string& kind, fmt::format_string<Args...> f,
                             Args&&... args) {
  std::uint64_t suppressed = 0;
  if (!warn_limiter_.allow(kind, &suppressed)) return;
  if (suppressed > 0)
    spdlog::warn("({} similar warnings suppressed) {}", suppressed,
                 fmt::format(f, std::forward<Args>(args)...));
  else
    spdlog::warn(f, std::forward<Args>(args)...);
}

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
  // Accepting is paused (listener out of epoll) until this time, after
  // EMFILE/ENFILE: the pending connection would wake us at once again.
  bool accept_paused = false;
  std::chrono::steady_clock::time_point accept_resume;
  mutable std::mutex mu;
  std::unordered_map<std::uint64_t, std::shared_ptr<Connection>> conns;
  // Counters (relaxed): see snapshot.h.
  TrafficCounters received, sent;
  std::atomic<std::uint64_t> accepted{0}, rx_rounds{0}, tx_rounds{0};
};

// Receives one connection's frames: charges credit and memory, then routes.
class Forwarder::RecvSinkImpl final : public proto::RecvSink {
 public:
  RecvSinkImpl(Forwarder& f, std::shared_ptr<Connection> c) : f_(f), conn_(std::move(c)) {}

  std::optional<Payload> payload_dest(const FrameHeader& hdr) override {
    if (fatal_) return std::nullopt;
    if (!conn_->job)
      return Payload::allocate(hdr.payload_len);  // hello: bounded by kPreHelloMaxPayload
    // The job's fair share first: a job over it parks (only its own frames
    // leaving zipperd let it go on), however many buffers are free.
    auto& held = conn_->job->memory_held;
    const std::uint64_t bytes = hdr.payload_len;
    conn_->share_wait = 0;
    if (bytes > 0 && !f_.share_.try_acquire(held, bytes)) {
      conn_->share_wait = bytes;
      f_.warn_limited("share", "job {} holds its fair share of memory ({} bytes); pausing {}",
                      conn_->job->log_name(), f_.share_.share(), conn_->name());
      return std::nullopt;
    }
    std::optional<BufferPool::Buffer> buf;
    if (bytes > 0) {
      buf = f_.pool_->acquire(hdr.payload_len);
      if (!buf) {  // park until a buffer frees up
        f_.share_.release(held, bytes);
        return std::nullopt;
      }
    }
    const std::uint64_t cost = proto::credit_cost(hdr.payload_len);
    if (!conn_->credit.charge(cost)) {
      ++conn_->errors;
      conn_->credit.release(cost);
      f_.share_.release(held, bytes);
      if (buf) f_.pool_->release(*buf);
      f_.send_error(
          conn_, ErrorCode::kCreditOverrun, conn_->vrank, hdr.seq,
          "client exceeded its credit of " + std::to_string(conn_->credit.granted()) + " frames");
      fatal_ = true;
      return std::nullopt;
    }
    // The client can no longer send a largest frame: it stalls until credit returns.
    const bool exhausted =
        conn_->credit.granted() - conn_->credit.in_use() < proto::credit_cost(f_.cfg_.max_frame);
    if (exhausted && !conn_->credit_exhausted) {
      conn_->credit_stalls.fetch_add(1, std::memory_order_relaxed);
      f_.credit_stalls_.fetch_add(1, std::memory_order_relaxed);
    }
    conn_->credit_exhausted = exhausted;
    // The owner returns the buffer, the job's share and the credit when the
    // last reference (the destination's send queue, normally) drops the
    // payload. It must not keep the sender alive: two connections that die
    // with frames queued for each other would otherwise hold each other (and
    // every buffer queued on them) forever, leaking pool buffers, peers'
    // credit and sockets.
    auto owner = std::shared_ptr<void>(
        buf ? static_cast<void*>(buf->data) : nullptr,
        [&f = f_, w = std::weak_ptr<Connection>(conn_), job = conn_->job, buf, bytes, cost](void*) {
          f.share_.release(job->memory_held, bytes);
          if (job->share_parked.load(std::memory_order_relaxed) > 0) f.wake_all_receivers();
          if (buf) f.release_buffer(*buf);
          if (auto c = w.lock()) f.return_credit(c, cost);
        });
    if (hdr.payload_len > 0) {
      conn_->mid_frame = true;
      conn_->frame_started = std::chrono::steady_clock::now();
    }
    Payload out{std::span<std::byte>(buf ? buf->data : nullptr, hdr.payload_len), std::move(owner)};
    // The buffer still accounts for the bytes (pools, credit, the job's
    // share) when they travel in a pipe instead.
    if (f_.cfg_.splice && bytes >= PipePool::kMinPayload && conn_->link->splices() &&
        (hdr.type == FrameType::kChunk || hdr.type == FrameType::kEager)) {
      if (auto dest = conn_->job->lookup(hdr.dst); dest && dest->link->splices())
        out.pipe = f_.pipes_->acquire(bytes);
    }
    return out;
  }

  void on_frame(const FrameHeader& hdr, Payload payload) override {
    if (fatal_) return;
    conn_->mid_frame = false;
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

Forwarder::Forwarder(Config cfg)
    : cfg_(std::move(cfg)),
      share_(cfg_.max_memory, 2 * std::uint64_t{cfg_.max_frame}),
      registry_(cfg_.max_jobs, cfg_.max_ranks) {
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
  if (cfg_.auth != "secret" && cfg_.auth != "munge")
    throw std::invalid_argument("auth must be 'secret' or 'munge', got '" + cfg_.auth + "'");
  if (cfg_.max_ranks < 2 || cfg_.max_ranks > (1u << 24))
    throw std::invalid_argument("max ranks must be between 2 and 16777216");
  if (cfg_.max_jobs == 0 || cfg_.max_connections == 0)
    throw std::invalid_argument("max jobs and max connections must be positive");
  if (cfg_.hello_timeout_ms <= 0 || cfg_.ready_timeout_ms <= 0 || cfg_.frame_timeout_ms <= 0 ||
      cfg_.accept_pause_ms <= 0 || cfg_.keepalive_s < 0)
    throw std::invalid_argument("timeouts must be positive (keepalive 0 = off)");
  pool_ = std::make_unique<BufferPool>(cfg_.pools);
  // 1 MiB pipes take payloads up to 256 KiB (PayloadPipe::max_payload), the
  // chunks libmmpi sends; 64 of them stay within an unprivileged user's
  // default pipe limit (fs.pipe-user-pages-soft, 64 MiB).
  pipes_ = std::make_unique<PipePool>(cfg_.splice ? 64 : 0, std::size_t{1} << 20);
  keys_ = std::make_unique<proto::auth::KeyPair>();
  if (cfg_.auth == "munge")
    for (std::size_t i = 0; i < cfg_.listen.size(); ++i)
      munge_.push_back(std::make_unique<proto::auth::MungeVerifier>(
          i < cfg_.munge_socket.size() ? cfg_.munge_socket[i] : std::string()));
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
  spdlog::info(
      "admission: auth {}, at most {} jobs of at most {} ranks, {} connections; each job may "
      "hold at least {} bytes and a fair share of {} bytes; ranks must use their group's side: {}",
      cfg_.auth, cfg_.max_jobs, cfg_.max_ranks, cfg_.max_connections, share_.share(),
      cfg_.max_memory, cfg_.group_sides && cfg_.listen.size() == 2 ? "yes" : "no");
  spdlog::info(
      "timeouts: hello+auth {} ms, job complete {} ms, frame payload {} ms; TCP keepalive {} s; "
      "accept pause on EMFILE {} ms",
      cfg_.hello_timeout_ms, cfg_.ready_timeout_ms, cfg_.frame_timeout_ms, cfg_.keepalive_s,
      cfg_.accept_pause_ms);
  started_ = true;
  for (auto& s : sides_) {
    s->rx = std::thread([this, side = s.get()] {
      block_sigpipe();
      recv_loop(*side);
    });
    s->tx = std::thread([this, side = s.get()] {
      block_sigpipe();
      send_loop(*side);
    });
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
  const PipePool::Stats ps = pipes_->stats();
  spdlog::info("splice: {} payloads ({} bytes) relayed through pipes, {} copied for lack of one",
               ps.spliced_frames, ps.spliced_bytes, ps.no_pipe);
  for (const auto& c : st.pools)
    spdlog::info(
        "pool {} ({} bytes): peak {} of {} buffers in use, {} taken ({} lent to smaller "
        "frames), {} times empty",
        c.name, c.buffer_bytes, c.peak, c.buffers, c.taken, c.borrowed, c.exhausted);
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
  const PipePool::Stats ps = pipes_->stats();
  st.spliced_frames = ps.spliced_frames;
  st.spliced_bytes = ps.spliced_bytes;
  st.memory_registrations = proto::memory_registrations();
  st.pools = pool_->stats();
  st.auth_failures = auth_failures_.load();
  st.refused_admissions = refused_admissions_.load();
  st.timeouts = timeouts_.load();
  st.accept_pauses = accept_pauses_.load();
  return st;
}

void Forwarder::note_protocol_error(const std::shared_ptr<Connection>& conn) {
  ++protocol_errors_;
  conn->errors.fetch_add(1, std::memory_order_relaxed);
}

void Forwarder::set_draining(bool on) {
  if (draining_.exchange(on) == on) return;
  if (on)
    spdlog::info("draining: no new jobs are admitted, {} running", registry_.job_count());
  else
    spdlog::info("drain ended: admitting new jobs ({} running)", registry_.job_count());
}

std::vector<std::uint64_t> Forwarder::loop_rounds() const {
  std::vector<std::uint64_t> out;
  for (const auto& s : sides_) {
    out.push_back(s->rx_rounds.load(std::memory_order_relaxed));
    out.push_back(s->tx_rounds.load(std::memory_order_relaxed));
  }
  return out;
}

Snapshot Forwarder::snapshot() const {
  using namespace std::chrono;
  const auto now = steady_clock::now();
  const auto secs = [&](steady_clock::time_point t) { return duration<double>(now - t).count(); };
  Snapshot s;
  s.uptime_s = secs(started_at_);
  s.draining = draining();
  s.relayed = {frames_relayed_.load(), bytes_relayed_.load()};
  s.connections_accepted = connections_.load();
  s.protocol_errors = protocol_errors_.load();
  s.auth_errors = auth_failures_.load();
  s.jobs_refused_draining = refused_draining_.load();
  s.credit_stalls = credit_stalls_.load();
  s.memory_stalls = memory_stalls_.load();
  const PipePool::Stats ps = pipes_->stats();
  s.spliced = {ps.spliced_frames, ps.spliced_bytes};
  for (const auto& side : sides_) {
    struct Seen {
      std::shared_ptr<Connection> conn;
      std::uint64_t job;
      std::uint32_t vrank;
    };
    std::vector<Seen> conns;
    {
      std::lock_guard lk(side->mu);
      for (const auto& [id, c] : side->conns)
        if (c->admitted.load(std::memory_order_acquire))
          conns.push_back({c, c->job->id(), c->vrank});
        else
          conns.push_back({c, 0, 0});
    }
    std::sort(conns.begin(), conns.end(),
              [](const Seen& a, const Seen& b) { return a.conn->id < b.conn->id; });
    s.sides.push_back({side->name, side->listener->address(), side->received.load(),
                       side->sent.load(), side->accepted.load(), conns.size()});
    for (const auto& [c, job, vrank] : conns) {
      LinkSnapshot l;
      l.id = c->id;
      l.side = side->name;
      l.peer = c->link->peer();
      l.job = job;  // 0 before hello
      l.vrank = vrank;
      l.credits_granted = c->credit.granted();
      l.credits_in_use = c->credit.in_use();
      l.queued_bytes = c->link->send_queued_bytes();
      l.received = c->received.load();
      l.sent = c->sent.load();
      l.credit_stalls = c->credit_stalls.load();
      l.memory_stalls = c->memory_stalls.load();
      l.errors = c->errors.load();
      l.age_s = secs(c->accepted);
      s.links.push_back(std::move(l));
    }
  }
  const auto add_job = [&](const Job& j, bool finished) {
    s.jobs.push_back({j.id(), j.np_low(), j.np_high(), j.connected(), finished, secs(j.created),
                      j.from_low.load(), j.from_high.load()});
  };
  for (const auto& j : registry_.active()) {
    add_job(*j, false);
    ++s.jobs_active;
    s.ranks_connected += j->connected();
  }
  for (const auto& j : registry_.finished()) add_job(*j, true);
  for (const auto& c : pool_->stats())
    s.pools.push_back({c.name, c.buffer_bytes, c.buffers, c.in_use, c.peak});
  return s;
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
    side.rx_rounds.fetch_add(1, std::memory_order_relaxed);
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
          // A job at its fair share stays parked until its own frames
          // leave; waking it for every other job's release would cost a
          // pass over all its connections per frame.
          const std::uint64_t share = share_.share();
          for (auto& [cid, c] : side.conns)
            if (c->parked &&
                !(c->share_wait > 0 && c->job->memory_held.load() + c->share_wait > share))
              parked.push_back(c);
        }
        for (auto& c : parked) progress_conn(side, c);
      } else if (auto conn = side.find(id)) {
        progress_conn(side, conn);
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (side.accept_paused && now >= side.accept_resume) {
      side.accept_paused = false;
      epoll_add(side.epoll_rx.get(), side.listener->poll_fd(), EPOLLIN, kListenerId);
      spdlog::info("side {}: accepting connections again", side.name);
    }
    // Every 250 ms: at most a quarter of a second late on any timeout.
    if (now - last_sweep > std::chrono::milliseconds(250)) {
      last_sweep = now;
      sweep(side);
    }
  }
}

void Forwarder::sweep(Side& side) {
  using std::chrono::milliseconds;
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<std::shared_ptr<Connection>, const char*>> expired;
  std::vector<std::shared_ptr<Connection>> parked;
  {
    std::lock_guard lk(side.mu);
    for (auto& [cid, c] : side.conns) {
      if (c->parked) parked.push_back(c);  // shares change as jobs come and go
      if (!c->job) {
        if (now - c->accepted > milliseconds(cfg_.hello_timeout_ms))
          expired.emplace_back(c, "no hello and authentication within the hello timeout");
      } else if (c->mid_frame && now - c->frame_started > milliseconds(cfg_.frame_timeout_ms)) {
        expired.emplace_back(c, "a frame's payload did not arrive within the frame timeout");
      } else if (now - c->accepted > milliseconds(cfg_.ready_timeout_ms) && !c->job->ready()) {
        expired.emplace_back(c, "the job's other ranks did not connect within the ready timeout");
      }
    }
  }
  for (auto& c : parked) progress_conn(side, c);
  // Marked first: ranks of one job that time out together are not told
  // about each other (n^2 error frames on this thread).
  for (auto& [c, why] : expired) c->doomed = true;
  for (auto& [c, why] : expired) {
    ++timeouts_;
    send_error(c, c->job ? ErrorCode::kBadHello : ErrorCode::kUnknownJob, c->vrank, 0, why);
    close_conn(c, why);
  }
}

void Forwarder::pause_accepting(Side& side, int err) {
  if (side.accept_paused) return;
  side.accept_paused = true;
  side.accept_resume =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.accept_pause_ms);
  epoll_ctl(side.epoll_rx.get(), EPOLL_CTL_DEL, side.listener->poll_fd(), nullptr);
  ++accept_pauses_;
  warn_limited("accept", "side {}: cannot accept ({}); pausing accepts for {} ms", side.name,
               std::strerror(err), cfg_.accept_pause_ms);
}

void Forwarder::send_loop(Side& side) {
  epoll_event evs[64];
  while (!stopping_) {
    side.tx_rounds.fetch_add(1, std::memory_order_relaxed);
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
          // The peer address only: job and rank belong to the receive thread.
          warn_limited("send", "send to {} failed: {}", conn->link->peer(), conn->link->error());
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
      warn_limited("refused", "side {}: refused a connection from {}", side.name, r);
    }
  };
  while (auto link = side.listener->accept()) {
    log_refused();
    if (open_conns_.load() >= cfg_.max_connections) {
      warn_limited("max-connections",
                   "side {}: closing a connection from {}: {} connections open (--max-connections)",
                   side.name, link->peer(), open_conns_.load());
      continue;  // the link's destructor closes it
    }
    ++open_conns_;
    set_keepalive(link->poll_fd(), cfg_.keepalive_s);
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
    ++side.accepted;
    spdlog::debug("side {}: accepted {}", side.name, conn->link->peer());
    const int fd = conn->link->poll_fd();
    epoll_add(side.epoll_tx.get(), fd, EPOLLOUT | EPOLLET, id);
    epoll_add(side.epoll_rx.get(), fd, EPOLLIN | EPOLLRDHUP | EPOLLET, id);
  }
  log_refused();
  if (const int err = side.listener->take_accept_error()) pause_accepting(side, err);
}

// Parked connections are counted by what they wait for: the global budget
// (parked_: any release wakes the receivers) or their job's share
// (Job::share_parked: only that job's releases do), so that a job parked at
// its share does not cost a wake-up per frame of every other job.
void Forwarder::set_parked(Connection& c, bool on) {
  const int kind = !on ? 0 : c.share_wait > 0 ? 2 : 1;
  if (kind == c.park_kind) return;
  if (c.park_kind == 1) --parked_;
  if (c.park_kind == 2) --c.job->share_parked;
  if (kind == 1) ++parked_;
  if (kind == 2) ++c.job->share_parked;
  c.park_kind = kind;
  c.parked = kind != 0;
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
    set_parked(*conn, true);
    conn->memory_stalls.fetch_add(1, std::memory_order_relaxed);
    memory_stalls_.fetch_add(1, std::memory_order_relaxed);
    st = conn->link->progress_recv(sink, 0);
  }
  set_parked(*conn, st == LinkStatus::kPaused && !sink.fatal());
  if (sink.fatal()) {
    note_protocol_error(conn);
    close_conn(conn, "protocol violation");
  } else if (st == LinkStatus::kClosed) {
    close_conn(conn, conn->said_bye ? "closed" : "closed without BYE");
  } else if (st == LinkStatus::kError) {
    const proto::LinkError err = conn->link->last_error();
    if (err.kind == proto::LinkErrorKind::kMalformed) {
      note_protocol_error(conn);
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
  set_parked(*conn, false);
  // Give queued frames (e.g. an error report) a last chance, then close.
  conn->link->progress_send();
  conn->link->shutdown();
  {
    std::lock_guard lk(side.mu);
    side.conns.erase(conn->id);
  }
  --open_conns_;
  if (conn->job) {
    const bool orderly = conn->said_bye;
    if (orderly)
      spdlog::debug("connection of {} ended: {}", conn->name(), why);
    else
      warn_limited("ended", "job {}: connection of {} ended: {}", conn->job->log_name(),
                   conn->name(), why);
    registry_.leave(conn);
    share_.set_jobs(registry_.job_count());
    if (!orderly) {
      for (auto& other : conn->job->members())
        if (!other->doomed)
          send_error(other, ErrorCode::kPeerGone, conn->vrank, 0,
                     "rank " + std::to_string(conn->vrank) + " disconnected: " + why);
    }
  } else {
    warn_limited("unadmitted", "connection from {} ended before admission: {}", conn->link->peer(),
                 why);
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

void Forwarder::on_frame(const std::shared_ptr<Connection>& conn, const FrameHeader& hdr,
                         Payload payload) {
  if (!conn->job) {
    if (hdr.type == FrameType::kHello) return on_hello(conn, hdr, payload);
    if (hdr.type == FrameType::kAuth) return on_auth(conn, payload);
    send_error(conn, ErrorCode::kUnknownJob, 0, hdr.seq,
               "a connection must be admitted (HELLO, AUTH) before anything else");
    note_protocol_error(conn);
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
      note_protocol_error(conn);
      send_error(conn, ErrorCode::kMalformed, conn->vrank, hdr.seq,
                 std::string("unexpected ") + std::string(proto::to_string(hdr.type)) +
                     " frame from a client");
      return close_conn(conn, "unexpected frame type");
  }
  if (hdr.job_id != conn->job->id() || hdr.src != conn->vrank) {
    note_protocol_error(conn);
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
  conn->received.add(hdr.payload_len);
  sides_[conn->side]->received.add(hdr.payload_len);
  dest->sent.add(hdr.payload_len);
  sides_[dest->side]->sent.add(hdr.payload_len);
  conn->job->count(hdr.src, hdr.payload_len);
  // A CTS lets the opposite direction's rendezvous go on: it must not wait
  // behind the data queued for this client (it is matched by sequence
  // number, not by order, so overtaking is safe).
  if (payload.pipe && !dest->link->splices() && !proto::materialize(payload)) {
    // Never happens short of a kernel failure; the frame is lost, so the
    // sender's connection goes rather than carry on with a gap.
    return close_conn(conn, std::string("cannot read a spliced payload: ") + std::strerror(errno));
  }
  OutFrame out{hdr, std::move(payload), {}};
  out.urgent = hdr.type == FrameType::kCts;
  dest->link->post(std::move(out));
  // Cut-through: write now from this thread; the destination side's send
  // thread finishes whatever the socket does not take.
  if (dest->link->progress_send() == LinkStatus::kError) dest->link->shutdown();
}

}  // namespace zipper::forwarder
