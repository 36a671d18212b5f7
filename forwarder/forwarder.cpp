// Forwarder lifecycle: settings checks, the pools, binding the listeners,
// starting and stopping the threads. The rest of the class lives beside it,
// one concern per file: event_loops, connections, admission, relay,
// recv_sink (memory and credit), timeouts, stats.
#include "forwarder.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
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
      registry_(cfg_.max_jobs, cfg_.max_ranks,
                static_cast<std::uint32_t>(std::uint64_t{cfg_.max_connections} *
                                           cfg_.max_job_connections_share / 100),
                cfg_.max_jobs_per_user, cfg_.max_jobs_per_prefix,
                std::chrono::milliseconds(cfg_.idle_evict_ms)) {
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
  if (cfg_.max_jobs == 0 || cfg_.max_connections == 0 || cfg_.max_jobs_per_user == 0)
    throw std::invalid_argument("max jobs, max jobs per user and max connections must be positive");
  if (cfg_.max_jobs_per_prefix == 0 || cfg_.control_budget == 0 || cfg_.idle_evict_ms <= 0)
    throw std::invalid_argument(
        "max jobs per prefix, the control budget and the idle eviction time must be positive");
  if (cfg_.prefix_v4 < 1 || cfg_.prefix_v4 > 32 || cfg_.prefix_v6 < 1 || cfg_.prefix_v6 > 128)
    throw std::invalid_argument("address prefixes must be 1..32 (IPv4) and 1..128 (IPv6) bits");
  if (cfg_.max_job_connections_share < 1 || cfg_.max_job_connections_share > 100)
    throw std::invalid_argument("a job's share of the connections must be 1 to 100 percent");
  if (std::uint64_t{cfg_.max_connections} * cfg_.max_job_connections_share / 100 < 2)
    throw std::invalid_argument(
        "a job's share of --max-connections must allow a 1+1 job (at least 2 connections)");
  if (cfg_.hello_timeout_ms <= 0 || cfg_.ready_timeout_ms <= 0 || cfg_.frame_timeout_ms <= 0 ||
      cfg_.accept_pause_ms <= 0 || cfg_.keepalive_s < 0)
    throw std::invalid_argument("timeouts must be positive (keepalive 0 = off)");
  pool_ = std::make_unique<BufferPool>(cfg_.pools);
  // 1 MiB pipes take payloads up to 256 KiB (PayloadPipe::max_payload), the
  // chunks libmmpi sends; 64 of them stay within an unprivileged user's
  // default pipe limit (fs.pipe-user-pages-soft, 64 MiB).
  pipes_ = std::make_unique<PipePool>(cfg_.splice ? 64 : 0, std::size_t{1} << 20);
  keys_ = cfg_.host_key ? cfg_.host_key : std::make_shared<proto::auth::HostKey>();
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
      "admission: auth {}, at most {} jobs ({} per user), {} connections, a job's layout at "
      "most {} ranks ({} % of the connections); each job may hold at least {} bytes and a fair "
      "share of {} bytes, and per pool class its share of the buffers; ranks must use their "
      "group's side: {}",
      cfg_.auth, cfg_.max_jobs, cfg_.max_jobs_per_user, cfg_.max_connections,
      std::min<std::uint64_t>(cfg_.max_ranks, std::uint64_t{cfg_.max_connections} *
                                                  cfg_.max_job_connections_share / 100),
      cfg_.max_job_connections_share, share_.share(), cfg_.max_memory,
      cfg_.group_sides && cfg_.listen.size() == 2 ? "yes" : "no");
  spdlog::info(
      "shares: at most {} jobs per address prefix (/{} IPv4, /{} IPv6); a job idle {} ms may "
      "be evicted for a new one a limit would refuse; {} frames without payload per connection "
      "per receive round",
      cfg_.max_jobs_per_prefix, cfg_.prefix_v4, cfg_.prefix_v6, cfg_.idle_evict_ms,
      cfg_.control_budget);
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
