// Forwarder lifecycle: settings checks, the pools, binding the listeners,
// starting and stopping the threads. The rest of the class lives beside it,
// one concern per file: event_loops, connections, admission, relay,
// recv_sink (memory and credit), timeouts, stats.
#include "forwarder.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <stdexcept>

#include "../proto/munge.h"
#include "forwarder_internal.h"

namespace zipper::forwarder {

namespace {

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

}  // namespace

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

void Forwarder::wake_all_receivers() {
  for (auto& s : sides_) wake(s->wake_rx.get());
}

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

}  // namespace zipper::forwarder
