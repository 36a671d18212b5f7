// What one worker process measured, by group (each --job, and the churn
// jobs), and the times of each job it served; the coordinator adds up the
// workers' (to_json / from_json carry them over a pipe).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "latency_histogram.h"

namespace zipper::loadgen {

/// Per zipperd (rail) and per group of ranks (0 low, 1 high).
using PerRail = std::vector<std::array<std::uint64_t, 2>>;

struct GroupStats {
  explicit GroupStats(std::size_t rails = 0)
      : rail_frames(rails), rail_bytes(rails), rail_connections(rails) {}
  std::uint64_t sent = 0, received = 0;              // messages (EAGER frames)
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // payload bytes
  LatencyHistogram latency;                          // one-way, send to receive (ns)
  LatencyHistogram rank_admission;                   // connect to HELLO_ACK, per rank and rail (ns)
  std::uint64_t first_send_ns = 0, last_recv_ns = 0;  // CLOCK_MONOTONIC; 0: none
  PerRail rail_frames, rail_bytes;  // sent through each zipperd, by sender's group
  PerRail rail_connections;         // connections made to each zipperd

  void merge(const GroupStats& o);
  nlohmann::json to_json() const;
  static GroupStats from_json(const nlohmann::json& j);
};

/// One job's milestones in one worker (CLOCK_MONOTONIC ns; 0: not reached).
/// A job spread over several workers has one per worker: its admission
/// runs from the earliest first_connect to the latest all_ready.
struct JobTimes {
  std::uint64_t first_connect = 0;  // its first rank started connecting
  std::uint64_t all_ready = 0;      // its last rank here saw JOB_READY on every zipperd
  std::uint64_t close_start = 0;    // its ranks here began to leave (BYE, or vanishing)
  std::uint64_t closed = 0;         // its last rank here is gone
  bool vanished = false;            // left without BYE
  std::uint32_t ranks = 0;          // ranks served here

  void merge(const JobTimes& o);
  nlohmann::json to_json() const;
  static JobTimes from_json(const nlohmann::json& j);
};

}  // namespace zipper::loadgen
