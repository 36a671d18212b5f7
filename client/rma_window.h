// One MPI window: the memory this process exposes (rma_memory.h), both
// roles of one-sided communication and the epochs that govern them, under
// one thin object that capi holds behind an MMPI_Win handle.
//
//   origin (rma_origin.h): operations as request messages, their replies
//     and completion;
//   target (rma_target.h): receives, checks and applies other members'
//     requests against the memory, grants locks, answers;
//   epochs (rma_epochs.h): which accesses are legal now (MPI_ERR_RMA_SYNC),
//     fence, PSCW and the lock bookkeeping.
//
// The window's round (target serve, then origin reap) runs on the progress
// list it is given, so a target serves whenever its process is inside any
// MMPI call, and the progress thread (rma_progress.h) serves while it
// computes. Ranks are ranks of the window's communicator; displacements are
// in the target's disp units (bytes for a dynamic window, whose
// displacements are addresses).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "communicator.h"
#include "engine.h"
#include "progress_list.h"
#include "rma_epochs.h"
#include "rma_memory.h"
#include "rma_origin.h"
#include "rma_target.h"

namespace zipper::client::rma {

/// Every public call holds the engine's lock (engine.h): the progress thread
/// (rma_progress.h) runs the window's round under it too.
class Window {
 public:
  /// `progress`: the list the window's round joins (and leaves when it
  /// goes); `comm`: the window's private communicator (a duplicate of the
  /// user's); `base`/`size` (bytes)/`disp_unit` (bytes): this process's
  /// memory; `targets`: every member's size and disp unit, by rank;
  /// `flavor`: an MPI_WIN_FLAVOR_* value; `reply_bytes`: the fetched data
  /// this target holds for one origin at a time (RmaSettings::reply_bytes).
  Window(Engine& engine, ProgressList& progress, CommPtr comm, void* base, std::uint64_t size,
         int disp_unit, std::vector<TargetInfo> targets, int flavor, std::uint64_t reply_bytes);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  const CommPtr& comm() const { return comm_; }
  void* base() const { return memory_.base(); }
  std::uint64_t size() const { return memory_.size(); }
  int disp_unit() const { return memory_.disp_unit(); }
  int flavor() const { return memory_.flavor(); }
  bool dynamic() const { return memory_.dynamic(); }

  // ---- dynamic windows: memory attached (MPI_Win_attach / detach)
  /// Returns MPI_ERR_RMA_ATTACH when [base, base+size) overlaps an attached region.
  int attach(void* base, std::uint64_t size);
  /// Returns MPI_ERR_RMA_ATTACH when `base` starts no attached region.
  int detach(const void* base);

  // ---- operations. Each returns MPI_SUCCESS or an MPI error code:
  // MPI_ERR_RANK, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP,
  // MPI_ERR_RMA_RANGE (outside the target's window, checked at the origin
  // where its size is known, else reported at the next completion),
  // MPI_ERR_RMA_SYNC (no access epoch to `target`). `st`, when given, is
  // completed with the operation (request-based forms).
  int put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st = nullptr);
  int get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st = nullptr);
  int accumulate(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                 int tcount, MPI_Datatype ttype, MPI_Op op, std::shared_ptr<OpState> st = nullptr);
  /// `obuf` is unused for MPI_NO_OP.
  int get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                     MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                     MPI_Op op, std::shared_ptr<OpState> st = nullptr);
  int compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type,
                       int target, MPI_Aint disp);

  /// Remote completion of every operation to `target` (-1: to all).
  int flush(int target);
  /// Local completion (buffers reusable, fetched data arrived) to `target` (-1: all).
  int flush_local(int target);

  // ---- epochs (rma_epochs.h)
  int lock(int lock_type, int target, int assert_flags);
  int unlock(int target);
  int lock_all(int assert_flags);
  int unlock_all();
  int fence(int assert_flags);
  int post(const std::vector<int>& group, int assert_flags);
  int start(const std::vector<int>& group, int assert_flags);
  int complete();
  int wait();
  int test(bool* flag);
  /// True while any epoch is open (MPI_Win_free then fails: MPI_ERR_RMA_SYNC).
  bool in_epoch() const;
  /// A barrier over the window's communicator by engine messages (serving meanwhile).
  int barrier();
  /// Waits until nothing is in flight either way (before the window goes).
  int drain();

  // ---- target (rma_target.h)
  /// Requests refused as malformed or hostile since creation.
  std::uint64_t refused() const { return target_.refused(); }

 private:
  using Guard = std::lock_guard<std::recursive_mutex>;

  Engine& engine_;
  ProgressList& progress_;
  CommPtr comm_;
  Memory memory_;
  Origin origin_;
  Target target_;
  Epochs epochs_;
  ProgressList::Handle round_;
};

}  // namespace zipper::client::rma
