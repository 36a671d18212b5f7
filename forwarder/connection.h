// One client connection as zipperd sees it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "../proto/link.h"
#include "credit_account.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

class Job;

struct Connection {
  Connection(std::uint64_t id_, int side_, std::unique_ptr<proto::Link> link_,
             std::uint64_t credits)
      : id(id_), side(side_), link(std::move(link_)), credit(credits) {}

  const std::uint64_t id;
  const int side;  // index of the listener it arrived on
  const std::unique_ptr<proto::Link> link;
  CreditAccount credit;
  const std::chrono::steady_clock::time_point accepted = std::chrono::steady_clock::now();

  // Set once by the side's receive thread when the hello is accepted.
  std::shared_ptr<Job> job;
  std::uint32_t vrank = 0;
  bool said_bye = false;

  std::atomic<bool> closed{false};
  std::atomic<bool> credit_frame_queued{false};
  bool parked = false;            // receive paused for lack of memory (receive thread only)
  bool credit_exhausted = false;  // last frame left no room for a largest frame (receive thread)

  // Counters for zipperctl and /metrics (relaxed; see traffic_counters.h).
  TrafficCounters received;  // relayed frames from this client
  TrafficCounters sent;      // relayed frames to this client
  std::atomic<std::uint64_t> credit_stalls{0}, memory_stalls{0}, errors{0};

  std::string name() const {
    return job ? "rank " + std::to_string(vrank) + " (" + link->peer() + ")" : link->peer();
  }
};

}  // namespace zipper::forwarder
