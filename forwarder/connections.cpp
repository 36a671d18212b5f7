// A connection's life in zipperd: accepted (pausing on EMFILE/ENFILE rather
// than spinning), closed, and its job's other ranks told it went.
#include <fmt/format.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>

#include "../proto/site_hello.h"
#include "control_frames.h"
#include "forwarder.h"
#include "side.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::FrameType;

namespace {

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

void Forwarder::accept_all(Side& side) {
  const auto log_refused = [&] {
    for (const auto& r : side.listener->take_refused()) {
      ++counters_.protocol_errors;
      log_.warn("refused", "side {}: refused a connection from {}", side.name, r);
    }
  };
  while (auto link = side.listener->accept()) {
    log_refused();
    if (open_conns_.load() >= cfg_.max_connections && !make_room_for_connection()) {
      log_.warn("max-connections",
                "side {}: closing a connection from {}: {} connections open (--max-connections)",
                side.name, link->peer(), open_conns_.load());
      continue;  // the link's destructor closes it
    }
    ++open_conns_;
    set_keepalive(link->poll_fd(), cfg_.keepalive_s);
    const std::uint64_t id = next_conn_id_++;
    auto conn = std::make_shared<Connection>(id, side.index, std::move(link), cfg_.conn_credits);
    conn->budget = ControlBudget(cfg_.control_budget);
    conn->ping_share = PingShare(cfg_.ping_rate, cfg_.ping_burst);
    {
      std::lock_guard lk(unadmitted_mu_);
      unadmitted_.push_back(conn);
    }
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
    side.admit_due.push_back(conn);
    ++counters_.connections;
    ++side.accepted;
    spdlog::debug("side {}: accepted {}", side.name, conn->link->peer());
    // One read per small frame; recv_loop passes the hang-ups on (edge-triggered).
    conn->link->stop_at_short_read(true);
    const int fd = conn->link->poll_fd();
    epoll_add(side.epoll_tx.get(), fd, EPOLLOUT | EPOLLET, id);
    epoll_add(side.epoll_rx.get(), fd, EPOLLIN | EPOLLRDHUP | EPOLLET, id);
  }
  log_refused();
  if (const int err = side.listener->take_accept_error()) pause_accepting(side, err);
}

bool Forwarder::make_room_for_connection() {
  // A connection that has not proved anything yet goes first, the oldest:
  // it holds a place only until the hello timeout, and a new legitimate
  // rank finishes admission in milliseconds, long before the flood behind
  // it reaches it. An idle admitted job goes only when none is left.
  {
    std::lock_guard lk(unadmitted_mu_);
    while (!unadmitted_.empty()) {
      auto c = unadmitted_.front().lock();
      unadmitted_.pop_front();
      if (!c || c->closed || c->doomed || c->admitted.load(std::memory_order_acquire)) continue;
      c->doomed = true;
      c->link->shutdown();  // its receive thread sees the end and closes it
      counters_.unadmitted_evicted.fetch_add(1, std::memory_order_relaxed);
      log_.warn("evict-unadmitted",
                "closing {} (not admitted yet) to make room at --max-connections", c->link->peer());
      return true;
    }
  }
  if (auto job = registry_.evict_idle(std::chrono::steady_clock::now())) {
    admission_->end_evicted(job, "a new connection needed its place at --max-connections");
    return true;
  }
  return false;
}

void Forwarder::pause_accepting(Side& side, int err) {
  if (side.accept_paused) return;
  side.accept_paused = true;
  side.accept_resume =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.accept_pause_ms);
  epoll_ctl(side.epoll_rx.get(), EPOLL_CTL_DEL, side.listener->poll_fd(), nullptr);
  ++counters_.accept_pauses;
  log_.warn("accept", "side {}: cannot accept ({}); pausing accepts for {} ms", side.name,
            std::strerror(err), cfg_.accept_pause_ms);
}

void Forwarder::close_conn(const std::shared_ptr<Connection>& conn, const std::string& why) {
  if (conn->closed.exchange(true)) return;
  // O(1) here, on the relay thread: unpark, forget the id (events for it
  // are ignored from now on), and hand the rest to the reaper, however
  // large the job (reaper.h).
  flow_->park(*conn, false);
  Side& side = *sides_[conn->side];
  {
    std::lock_guard lk(side.mu);
    side.conns.erase(conn->id);
  }
  --open_conns_;
  // The rank's slot and the job's place under the caps are given back here,
  // at once (a map erase under the registry's lock): a job that ends frees
  // its place before its ranks' next job is admitted.
  bool finished = false;
  if (conn->job) {
    finished = registry_.leave(conn).finished;
    flow_->set_jobs(registry_.job_count());
  }
  reaper_.post([this, conn, why, finished] { finish_close(conn, why, finished); });
}

void Forwarder::finish_close(const std::shared_ptr<Connection>& conn, const std::string& why,
                             bool finished) {
  Side& side = *sides_[conn->side];
  const int fd = conn->link->poll_fd();
  epoll_ctl(side.epoll_rx.get(), EPOLL_CTL_DEL, fd, nullptr);
  epoll_ctl(side.epoll_tx.get(), EPOLL_CTL_DEL, fd, nullptr);
  // Give queued frames (e.g. an error report) a last chance, then close.
  conn->link->progress_send();
  conn->link->shutdown();
  if (conn->job) {
    const bool orderly = conn->said_bye;
    if (orderly)
      spdlog::debug("job {}: connection of {} ended: {}", conn->job->label(), conn->name(), why);
    else
      log_.warn("ended", "job {}: connection of {} ended: {}", conn->job->label(), conn->name(),
                why);
    if (!orderly) note_departure(conn, why);
    if (finished) {
      log_job_end(*conn->job);
      // A large job's connection state went back to malloc in many small
      // pieces: hand the free pages back to the kernel, so that zipperd's
      // RSS follows the ranks it serves (a few ms, once per large job).
      if (conn->job->size() >= kTrimAfterRanks) malloc_trim(0);
    }
  } else if (conn->said_bye) {
    spdlog::debug("connection from {} ended before admission: {}", conn->link->peer(), why);
  } else {
    log_.warn("unadmitted", "connection from {} ended before admission: {}", conn->link->peer(),
              why);
  }
  // The caller's task drops the last reference: the socket closes on the
  // reaper thread too.
}

void Forwarder::note_departure(const std::shared_ptr<Connection>& conn, const std::string& why) {
  Job& job = *conn->job;
  job.pending_departures.emplace_back(conn->vrank, why);
  if (job.pending_departures.size() > 1) return;  // a flush is on its way
  // Coalesced: ranks that leave together (a node or a whole job going)
  // are announced once, to the ranks still there when the window closes.
  reaper_.post_after(kDepartureWindow, [this, job = conn->job] { announce_departures(job); });
}

void Forwarder::announce_departures(const std::shared_ptr<Job>& job) {
  std::vector<std::pair<std::uint32_t, std::string>> batch;
  batch.swap(job->pending_departures);
  std::vector<std::pair<std::uint32_t, std::string>> notices;  // (about, text)
  for (auto& [vrank, why] : batch) {
    const auto about = job->depart_unannounced(vrank);
    if (!about) continue;  // the job was told it is broken already
    notices.emplace_back(*about, *about == Job::kAllRanks
                                     ? "more than " + std::to_string(Job::kAnnouncedDepartures) +
                                           " ranks of the job disconnected without BYE; the job "
                                           "is broken and further departures are not announced"
                                     : "rank " + std::to_string(vrank) + " disconnected: " + why);
  }
  if (notices.empty()) return;
  counters_.departure_notices.fetch_add(1, std::memory_order_relaxed);
  for (auto& other : job->members()) {
    if (other->doomed || other->closed) continue;  // left in the same storm: told nothing
    for (const auto& [about, text] : notices)
      send_error(other, ErrorCode::kPeerGone, about, 0, text);
  }
}

void Forwarder::log_job_end(const Job& job) {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - job.created).count();
  std::string relayed;
  for (std::size_t s = 0; s < job.sites().size(); ++s) {
    const Traffic t = job.from_site(s);
    relayed +=
        fmt::format("{}{} bytes in {} frames from site {}", s ? ", " : "", t.bytes, t.frames, s);
  }
  log_.info("job-end", "", "job {}: ended after {:.1f} s; {} ranks; relayed {}", job.label(), secs,
            proto::layout_text(job.sites()), relayed);
}

}  // namespace zipper::forwarder
