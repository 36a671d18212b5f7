// Forwarder lifecycle: building the collaborators, binding the listeners,
// starting and stopping the threads.
#include "forwarder.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "side.h"
#include "tenant_share.h"

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

namespace {

// The settings, checked before any collaborator is built from them.
Config checked(Config cfg) {
  check_config(cfg);
  return cfg;
}

}  // namespace

Forwarder::Forwarder(Config cfg)
    : cfg_(checked(std::move(cfg))),
      flow_(std::make_unique<FlowControl>(cfg_, counters_, log_, host())),
      registry_(cfg_.max_jobs, cfg_.max_ranks,
                static_cast<std::uint32_t>(std::uint64_t{cfg_.max_connections} *
                                           cfg_.max_job_connections_share / 100),
                cfg_.max_jobs_per_user, cfg_.max_jobs_per_prefix,
                std::chrono::milliseconds(cfg_.idle_evict_ms)),
      admission_(std::make_unique<Admission>(cfg_, registry_, *flow_, counters_, log_, host())),
      tenant_pings_(cfg_.tenant_ping_rate, std::max<std::uint32_t>(1, cfg_.tenant_ping_rate),
                    std::chrono::milliseconds(cfg_.tenant_ping_wait_ms)) {}

Forwarder::~Forwarder() { stop(); }

void Forwarder::start() {
  // Announced before any link exists: a verbs device registers each region
  // once, at its first use, so relaying a chunk costs no registration.
  for (const BufferPool::Region& r : flow_->pool().regions())
    pool_regions_.push_back(proto::register_long_lived_region(r.addr, r.bytes));
  for (std::size_t i = 0; i < cfg_.listen.size(); ++i) {
    auto side = std::make_unique<Side>(cfg_.listen[i].name, static_cast<int>(i));
    side->listener = proto::listen(cfg_.listen[i].endpoint, cfg_.verbs);
    epoll_add(side->epoll_rx.get(), side->listener->poll_fd(), EPOLLIN, kListenerId);
    spdlog::info("listening on side {} at {}", side->name, side->listener->address());
    sides_.push_back(std::move(side));
  }
  spdlog::info(
      "flow control: {} frames of credit per connection, frames up to {} bytes; payload "
      "pools (at most {} bytes): {}",
      cfg_.conn_credits, cfg_.max_frame, cfg_.max_memory, flow_->pool().describe());
  spdlog::info(
      "admission: auth {}, at most {} jobs ({} per user), {} connections, a job's layout at "
      "most {} ranks ({} % of the connections); each job may hold at least {} bytes and a fair "
      "share of {} bytes, and per pool class its share of the buffers; legs are sites (site s on "
      "listener s): {}",
      admission_->auth_mode(), cfg_.max_jobs, cfg_.max_jobs_per_user, cfg_.max_connections,
      std::min<std::uint64_t>(cfg_.max_ranks, std::uint64_t{cfg_.max_connections} *
                                                  cfg_.max_job_connections_share / 100),
      cfg_.max_job_connections_share, flow_->job_share(), cfg_.max_memory,
      legs_are_sites(cfg_) ? "yes" : "no");
  spdlog::info(
      "shares: a tenant (MUNGE uid, else address prefix /{} IPv4, /{} IPv6) holds at most {} "
      "jobs without MUNGE, {} with; the last {} of --max-jobs are kept for tenants holding no "
      "job; a job idle {} ms may be evicted for a new one a limit would refuse; {} frames "
      "without payload per connection per receive round; {} PINGs per second per connection "
      "(burst {}), {} per tenant (answers put off at most {} ms)",
      cfg_.prefix_v4, cfg_.prefix_v6, cfg_.max_jobs_per_prefix, cfg_.max_jobs_per_user,
      job_reserve(cfg_.max_jobs), cfg_.idle_evict_ms, cfg_.control_budget, cfg_.ping_rate,
      cfg_.ping_burst, cfg_.tenant_ping_rate, cfg_.tenant_ping_wait_ms);
  spdlog::info(
      "timeouts: hello+auth {} ms, job complete {} ms, frame payload {} ms; TCP keepalive {} s; "
      "accept pause on EMFILE {} ms",
      cfg_.hello_timeout_ms, cfg_.ready_timeout_ms, cfg_.frame_timeout_ms, cfg_.keepalive_s,
      cfg_.accept_pause_ms);
  started_ = true;
  reaper_.start(block_sigpipe);
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
  reaper_.stop();  // finishes every close and notice queued
  const Stats st = stats();
  spdlog::info(
      "stopped: {} connections, {} frames / {} payload bytes relayed, {} protocol errors, "
      "peak pool use {} of {} bytes, {} memory registrations",
      st.connections, st.frames_relayed, st.bytes_relayed, st.protocol_errors, st.peak_memory,
      st.pool_bytes, st.memory_registrations);
  const PipePool::Stats ps = flow_->pipes().stats();
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

void Forwarder::wake_receivers() {
  for (auto& s : sides_) wake(s->wake_rx.get());
}

}  // namespace zipper::forwarder
