// The epochs of a window at its origin side: which accesses are legal now
// (check_access: MPI_ERR_RMA_SYNC otherwise), fence, PSCW (both the access
// and the exposure side) and the passive-target lock bookkeeping. The
// synchronisation requests themselves travel through the origin
// (rma_origin.h); PSCW completes arrive at the target (rma_target.h).
#pragma once

#include <cstdint>
#include <vector>

#include "communicator.h"
#include "engine.h"
#include "rma_origin.h"
#include "rma_target.h"

namespace zipper::client::rma {

/// Called with the engine's lock held (engine.h), like every window call.
/// Ranks are ranks of the window's communicator. Each returns MPI_SUCCESS
/// or an MPI error code (MPI_ERR_RANK, MPI_ERR_LOCKTYPE, MPI_ERR_RMA_SYNC,
/// or the first error of the operations a synchronisation completes).
class Epochs {
 public:
  /// `origin`, `target`: the window's two halves (outlive this).
  Epochs(Engine& engine, CommPtr comm, Origin& origin, Target& target);
  Epochs(const Epochs&) = delete;
  Epochs& operator=(const Epochs&) = delete;

  /// MPI_SUCCESS when an access epoch to `target` is open; MPI_ERR_RANK,
  /// MPI_ERR_RMA_SYNC otherwise.
  int check_access(int target) const;

  int lock(int lock_type, int target, int assert_flags);
  int unlock(int target);
  int lock_all(int assert_flags);
  int unlock_all();
  /// Remote completion of every operation to `target` (-1: to all).
  int flush(int target);
  /// Local completion (buffers reusable, fetched data arrived) to `target` (-1: all).
  int flush_local(int target);
  /// Completes the operations of a fence epoch and starts the next one; the
  /// barrier runs over the window's communicator by engine messages, so
  /// this process keeps serving while it waits. `assert_flags`: MPI_MODE_*.
  int fence(int assert_flags);
  /// PSCW. `group`: ranks of the window's communicator.
  int post(const std::vector<int>& group, int assert_flags);
  int start(const std::vector<int>& group, int assert_flags);
  int complete();
  int wait();
  int test(bool* flag);
  /// True while any epoch is open.
  bool in_epoch() const;
  /// A barrier over the window's communicator by engine messages (serving meanwhile).
  int barrier();

 private:
  bool exposure_done() const;
  void end_exposure();

  Engine& engine_;
  CommPtr comm_;
  Origin& origin_;
  Target& target_;
  bool fence_open_ = false;
  std::vector<int> lock_type_;  // per target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE
  std::vector<bool> lock_nocheck_;
  bool lock_all_ = false, lock_all_nocheck_ = false;
  int locks_held_ = 0;
  std::vector<int> access_group_;  // PSCW access epoch (start .. complete)
  bool access_open_ = false;
  std::vector<int> exposure_group_;  // PSCW exposure epoch (post .. wait)
  bool exposure_open_ = false;
};

}  // namespace zipper::client::rma
