// The passive-target lock of one window at its target (MPI_Win_lock):
// one exclusive holder, or any number of shared holds, by origin rank.
// Granted in each origin's message order (rma_target.cpp).
#pragma once

#include <cstddef>
#include <vector>

namespace zipper::client::rma {

class LockTable {
 public:
  /// `origins`: the window's communicator size.
  explicit LockTable(std::size_t origins) : shared_holds_(origins, 0) {}

  /// Takes the lock for `origin`; false when it cannot be granted now.
  bool grant(std::size_t origin, bool exclusive) {
    if (exclusive) {
      if (exclusive_holder_ != -1 || shared_total_ > 0) return false;
      exclusive_holder_ = static_cast<int>(origin);
    } else {
      if (exclusive_holder_ != -1) return false;
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

 private:
  int exclusive_holder_ = -1;
  std::vector<int> shared_holds_;  // per origin
  int shared_total_ = 0;
};

}  // namespace zipper::client::rma
