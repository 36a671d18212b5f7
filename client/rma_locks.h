// The passive-target lock of one window at its target (MPI_Win_lock):
// one exclusive holder, or any number of shared holds, by origin rank.
// Fair: requests that cannot be granted at once wait in one queue in their
// arrival order (FIFO across origins), and a request is granted only when
// no earlier one still waits, so a stream of shared locks cannot starve an
// exclusive one and a low origin rank has no precedence over a high one.
// The target retries a waiting request after every release
// (rma_target.cpp); one origin has at most one request waiting (its later
// requests wait behind it in its own queue).
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <vector>

namespace zipper::client::rma {

class LockTable {
 public:
  /// `origins`: the window's communicator size.
  explicit LockTable(std::size_t origins) : shared_holds_(origins, 0) {}

  /// Takes the lock for `origin`, or queues the request (first call) and
  /// returns false; called again for the same request until it returns true.
  bool grant(std::size_t origin, bool exclusive) {
    const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                                 [&](const Waiter& w) { return w.origin == origin; });
    const bool first = it == waiting_.begin();  // none queued ahead (or none at all)
    const bool free =
        exclusive ? exclusive_holder_ == -1 && shared_total_ == 0 : exclusive_holder_ == -1;
    if (!first || !free) {
      if (it == waiting_.end()) waiting_.push_back(Waiter{origin, exclusive});
      return false;
    }
    if (it != waiting_.end()) waiting_.erase(it);
    if (exclusive) {
      exclusive_holder_ = static_cast<int>(origin);
    } else {
      ++shared_holds_[origin];
      ++shared_total_;
    }
    return true;
  }

  /// Releases `origin`'s lock; false when it holds none (MPI_ERR_RMA_SYNC).
  bool release(std::size_t origin) {
    if (exclusive_holder_ == static_cast<int>(origin)) {
      exclusive_holder_ = -1;
    } else if (shared_holds_[origin] > 0) {
      --shared_holds_[origin];
      --shared_total_;
    } else {
      return false;
    }
    return true;
  }

  /// Requests waiting (for tests and diagnostics).
  std::size_t waiting() const { return waiting_.size(); }

 private:
  struct Waiter {
    std::size_t origin;
    bool exclusive;
  };
  int exclusive_holder_ = -1;
  std::vector<int> shared_holds_;  // per origin
  int shared_total_ = 0;
  std::deque<Waiter> waiting_;  // in arrival order
};

}  // namespace zipper::client::rma
