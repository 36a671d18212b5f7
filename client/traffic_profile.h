// What this process sent to each other rank of the job while profiling
// (MMPI_PROFILE, zipper-run --profile; docs/placement.md): bytes and
// messages per destination virtual rank. Two hooks feed it, between them
// every message libmmpi sends:
//   - the engine (engine.h): every point-to-point message, to a rank of this
//     site (Open MPI) or of another (zipperd), which also carries the
//     collectives' own messages, one-sided requests and replies and MPI-IO's
//     coordination;
//   - the native collectives libmmpi calls inside a site (native_traffic.h),
//     attributed by their data flow.
// MMPI_Finalize gathers every rank's row into one matrix (capi/profile_matrix.cpp).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace zipper::client {

class TrafficProfile {
 public:
  /// Most world ranks a profile counts: each rank keeps 32 bytes per rank
  /// of the job (32 MiB at this bound).
  static constexpr int kMaxWorldSize = 1 << 20;

  /// Counts for this process, virtual rank `self` of `world_size`
  /// (1..kMaxWorldSize).
  TrafficProfile(int world_size, int self);

  /// One message of `bytes` to virtual rank `vrank` (a message to itself is
  /// not traffic). The caller holds the engine's lock.
  void sent(int vrank, std::uint64_t bytes) {
    if (vrank == self_) return;
    Cell& c = engine_[static_cast<std::size_t>(vrank)];
    c.bytes += bytes;
    ++c.messages;
  }
  /// The native counters' lock, held by a native collective around all its
  /// sent_natively calls: such a call may run outside the engine's lock (a
  /// non-blocking collective's step inside the RMA progress thread's round
  /// meets a blocking one of the application's thread).
  std::unique_lock<std::mutex> lock_native() { return std::unique_lock<std::mutex>(native_mu_); }
  /// The same as sent() from a native collective. The caller holds lock_native().
  void sent_natively(int vrank, std::uint64_t bytes) {
    if (vrank == self_) return;
    Cell& c = native_[static_cast<std::size_t>(vrank)];
    c.bytes += bytes;
    ++c.messages;
  }

  struct Row {
    int dst = 0;  // virtual rank
    std::uint64_t bytes = 0, messages = 0;
  };
  /// Every destination sent at least one message, ascending. The caller
  /// holds the engine's lock (or profiling has stopped).
  std::vector<Row> rows() const;

  int self() const { return self_; }

 private:
  struct Cell {
    std::uint64_t bytes = 0, messages = 0;
  };
  int self_;
  std::vector<Cell> engine_;  // by virtual rank, under the engine's lock
  mutable std::mutex native_mu_;
  std::vector<Cell> native_;  // by virtual rank, under native_mu_
};

}  // namespace zipper::client
