// A listener's state in zipperd (Side: its epoll loops, connections and
// counters) and the epoll helpers its loops use.
#pragma once

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../proto/link.h"
#include "../proto/unique_fd.h"
#include "connection.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

/// epoll ids: the listener and the wake-up eventfd; connections use their id (>= 1).
inline constexpr std::uint64_t kListenerId = 0;
inline constexpr std::uint64_t kWakeId = ~std::uint64_t{0};

/// epoll_ctl(ADD); throws std::runtime_error on failure.
void epoll_add(int ep, int fd, std::uint32_t events, std::uint64_t id);
/// Wakes the loop waiting on eventfd `efd`.
void wake(int efd);

/// One listener ("side") of zipperd: its receive and send epoll loops, its
/// connections by id and its counters. Receive-thread-only fields say so.
struct Side {
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
  // Connections that spent their control budget this round (receive thread).
  std::vector<std::shared_ptr<Connection>> over_budget;
  // Connections over their PING share, not read until their ping_resume
  // (receive thread; one entry per flooding connection, so a scan is enough).
  std::vector<std::shared_ptr<Connection>> ping_waits;
  // Connections whose receive is parked (Connection::in_parked): a wake-up
  // retries these only, never a scan of every connection (receive thread).
  std::vector<std::shared_ptr<Connection>> parked;
  // Deadlines, so that a sweep touches only what is due (receive thread).
  // Every connection enters admit_due at accept; the hello and ready
  // timeouts are fixed, so accept order is deadline order and a queue is a
  // heap: checked at the earlier of the two from the front of admit_due,
  // then, if still unsettled, at the later one from later_due.
  std::deque<std::weak_ptr<Connection>> admit_due, later_due;
  // A frame's payload must arrive within the frame timeout of its header:
  // (deadline, connection), earliest first; one entry per connection
  // (Connection::frame_due_queued), moved on when its frame changed.
  using FrameDue = std::pair<std::chrono::steady_clock::time_point, std::weak_ptr<Connection>>;
  struct LaterFirst {
    bool operator()(const FrameDue& a, const FrameDue& b) const { return a.first > b.first; }
  };
  std::priority_queue<FrameDue, std::vector<FrameDue>, LaterFirst> frame_due;
  // Counters (relaxed): see snapshot.h.
  TrafficCounters received, sent;
  std::atomic<std::uint64_t> accepted{0}, rx_rounds{0}, tx_rounds{0};
};

}  // namespace zipper::forwarder
