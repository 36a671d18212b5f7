// The epoll loops: one receive and one send thread per listener (side).
// A->B and B->A use disjoint threads (full duplex); a receive thread writes a
// frame onwards itself (cut-through, relay.cpp) and the send thread finishes
// what a socket did not take, on EPOLLOUT.
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "control_frames.h"
#include "forwarder.h"
#include "recv_sink.h"
#include "side.h"

namespace zipper::forwarder {

using proto::ErrorCode;
using proto::FrameHeader;
using proto::LinkStatus;

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
    const int wait_ms = resume_ping_waits(side, 500);
    int n = 0;
    if (!side.over_budget.empty()) {
      n = epoll_wait(side.epoll_rx.get(), evs, 64, 0);  // connections over budget wait
    } else if (spin > 0) {
      n = epoll_wait(side.epoll_rx.get(), evs, 64, 0);
      if (n == 0) {
        --spin;
        sched_yield();
        continue;
      }
    } else {
      n = epoll_wait(side.epoll_rx.get(), evs, 64, wait_ms);
    }
    if (n > 0) spin = kSpinRounds;
    for (int i = 0; i < n && !stopping_; ++i) {
      const std::uint64_t id = evs[i].data.u64;
      if (id == kListenerId) {
        accept_all(side);
      } else if (id == kWakeId) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(side.wake_rx.get(), &v, sizeof v);
        retry_parked(side, false);
      } else if (auto conn = side.find(id)) {
        // Edge-triggered: an end of stream that came with the last data is
        // seen only by reading past it (the link stops at a short read).
        if (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) conn->link->note_peer_hangup();
        progress_conn(side, conn);
      }
    }
    // Then the connections that spent last round's control budget, each
    // with a fresh one (round robin).
    if (!side.over_budget.empty()) {
      std::vector<std::shared_ptr<Connection>> again;
      again.swap(side.over_budget);
      for (auto& c : again) {
        c->over_budget = false;
        progress_conn(side, c);
      }
      spin = kSpinRounds;
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
          log_.warn("send", "send to {} failed: {}", conn->link->peer(), conn->link->error());
          conn->link->shutdown();  // its receive thread sees the error and closes it
        }
      }
    }
  }
}

void Forwarder::note_parked(Side& side, const std::shared_ptr<Connection>& conn) {
  if (conn->in_parked || conn->closed || conn->park == ParkReason::kNone) return;
  conn->in_parked = true;
  side.parked.push_back(conn);
}

void Forwarder::retry_parked(Side& side, bool all) {
  if (side.parked.empty()) return;
  std::vector<std::shared_ptr<Connection>> list;
  list.swap(side.parked);
  for (auto& c : list) c->in_parked = false;
  for (auto& c : list) {
    if (c->closed || c->park == ParkReason::kNone) continue;  // left the list
    if (all || FlowControl::may_retry(*c)) progress_conn(side, c);
    note_parked(side, c);  // still parked: stays listed
  }
}

int Forwarder::resume_ping_waits(Side& side, int cap_ms) {
  if (side.ping_waits.empty()) return cap_ms;
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Connection>> due;
  std::erase_if(side.ping_waits, [&](const std::shared_ptr<Connection>& c) {
    if (c->ping_resume > now) return false;
    due.push_back(c);
    return true;
  });
  for (auto& c : due) {
    c->ping_waiting = false;
    progress_conn(side, c);
  }
  auto next = now + std::chrono::milliseconds(cap_ms);
  for (const auto& c : side.ping_waits) next = std::min(next, c->ping_resume);
  // Rounded up: waking a little early would find nothing due and spin.
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(next - now).count();
  return static_cast<int>(std::max<std::int64_t>(0, (us + 999) / 1000));
}

void Forwarder::progress_conn(Side& side, const std::shared_ptr<Connection>& conn) {
  if (conn->closed) return;
  // Over its PING share: not read before its next token (resume_ping_waits),
  // whatever its socket reports meanwhile.
  if (conn->ping_waiting) return;
  if (conn->pong_deferred) {  // its tenant's token is due now
    conn->pong_deferred = false;
    FrameHeader h;
    h.seq = conn->deferred_ping_seq;
    answer_ping(conn, h);
  }
  ConnectionSink sink(*this, *flow_, conn, side.rx_rounds.load(std::memory_order_relaxed),
                      &tenant_pings_);
  LinkStatus st = conn->link->progress_recv(sink, 0);
  if (conn->mid_frame && !conn->frame_due_queued) {
    conn->frame_due_queued = true;
    side.frame_due.emplace(conn->frame_started + std::chrono::milliseconds(cfg_.frame_timeout_ms),
                           conn);
  }
  if (const std::uint64_t d = sink.pings_deferred())
    counters_.pings_deferred.fetch_add(d, std::memory_order_relaxed);
  if (const std::uint64_t over = sink.pings_over_tenant_share()) {
    counters_.pings_over_tenant_share.fetch_add(over, std::memory_order_relaxed);
    log_.warn("tenant-ping-share",
              "job {}: {} sends PINGs while its tenant {} is over its share of {}/s "
              "(--tenant-ping-rate); dropped",
              conn->job->label(), conn->name(), conn->job->tenant(), cfg_.tenant_ping_rate);
  }
  if (const std::uint64_t over = sink.pings_over_share()) {
    counters_.pings_over_share.fetch_add(over, std::memory_order_relaxed);
    log_.warn("ping-share",
              "job {}: {} sends PINGs over its share of {}/s (--ping-rate); dropped, and its "
              "connection is read again in {} us",
              conn->job->label(), conn->name(), cfg_.ping_rate,
              std::chrono::duration_cast<std::chrono::microseconds>(
                  conn->ping_resume - std::chrono::steady_clock::now())
                  .count());
  }
  if (st == LinkStatus::kPaused && sink.ping_paused() && !sink.fatal()) {
    conn->ping_waiting = true;
    side.ping_waits.push_back(conn);
    return;
  }
  if (st == LinkStatus::kPaused && sink.budget_spent() && !sink.fatal()) {
    // Its share of this round is spent: served again next round, after the
    // connections that have events now (edge-triggered epoll would not
    // report its unread bytes again).
    counters_.control_deferrals.fetch_add(1, std::memory_order_relaxed);
    if (!conn->over_budget) {
      conn->over_budget = true;
      side.over_budget.push_back(conn);
    }
    return;
  }
  if (st == LinkStatus::kPaused && !sink.fatal() && conn->park == ParkReason::kNone) {
    // Out of memory. Count the connection as parked before trying once more:
    // memory released between the failed reservation and now woke nobody (no
    // receiver was parked yet), and its socket may never signal again.
    flow_->park(*conn, true);
    flow_->note_memory_stall(*conn);
    st = conn->link->progress_recv(sink, 0);
  }
  flow_->park(*conn, st == LinkStatus::kPaused && !sink.fatal());
  note_parked(side, conn);
  if (sink.fatal()) {
    // A handler that closed the connection counted its own reason (an
    // admission refusal is no protocol error), and one closed in
    // order while its frames were handled (a probe's BYE after HELLO) broke no rule.
    if (sink.violation() && !conn->said_bye) note_protocol_error(conn);
    close_conn(conn, "protocol violation");
  } else if (st == LinkStatus::kClosed) {
    close_conn(conn, conn->said_bye ? "closed" : "closed without BYE");
  } else if (st == LinkStatus::kError) {
    const proto::LinkError err = conn->link->last_error();
    // A rank of another release, at its first frame: refused by name, not a
    // protocol error. An admitted rank that changes version breaks the protocol.
    if (err.kind == proto::LinkErrorKind::kVersionMismatch && !conn->job)
      return admission_->refuse_version(conn, err.peer_version);
    if (err.kind == proto::LinkErrorKind::kMalformed ||
        err.kind == proto::LinkErrorKind::kVersionMismatch) {
      note_protocol_error(conn);
      send_error(conn, ErrorCode::kMalformed, conn->vrank, 0, err.message);
    }
    close_conn(conn, err.message);
  }
}

}  // namespace zipper::forwarder
