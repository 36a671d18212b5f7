// Synchronisation of MMPI windows: fence, PSCW, lock/unlock,
// lock_all/unlock_all, flush and sync. The epochs are
// client/rma_epochs.cpp's; here the handles and groups.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <atomic>

#include "handles.h"
#include "win_table.h"

using namespace zipper::capi;

namespace {

// The ranks of the window's communicator that `group` names; MPI_ERR_GROUP
// for an unknown group, MPI_ERR_RANK for a process outside the window.
int ranks_of(const WinEntry& e, MPI_Group group, std::vector<int>* out) {
  out->clear();
  if (group == MPI_GROUP_EMPTY) return MPI_SUCCESS;
  const zipper::client::Group* g = find_group(group);
  if (g == nullptr) return MPI_ERR_GROUP;
  for (int w : g->world) {
    const int r = e.comm->map().rank_of_world(w);
    if (r < 0) return MPI_ERR_RANK;
    out->push_back(r);
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int mmpi_impl_Win_fence(int assert_flags, MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->fence(assert_flags);
}

int mmpi_impl_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->lock(lock_type, rank, assert_flags);
}

int mmpi_impl_Win_unlock(int rank, MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->unlock(rank);
}

int mmpi_impl_Win_lock_all(int assert_flags, MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->lock_all(assert_flags);
}

int mmpi_impl_Win_unlock_all(MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->unlock_all();
}

int mmpi_impl_Win_flush(int rank, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0) return MPI_ERR_RANK;
  return e->win->flush(rank);
}

int mmpi_impl_Win_flush_all(MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->flush(-1);
}

int mmpi_impl_Win_flush_local(int rank, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0) return MPI_ERR_RANK;
  return e->win->flush_local(rank);
}

int mmpi_impl_Win_flush_local_all(MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->flush_local(-1);
}

// The window memory is the process's own memory in both copies (docs/rma.md):
// a memory barrier is all that synchronising them takes.
int mmpi_impl_Win_sync(MPI_Win win) {
  if (find_win(win) == nullptr) return MPI_ERR_WIN;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

int mmpi_impl_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  std::vector<int> ranks;
  if (int rc = ranks_of(*e, group, &ranks)) return rc;
  return e->win->post(ranks, assert_flags);
}

int mmpi_impl_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  std::vector<int> ranks;
  if (int rc = ranks_of(*e, group, &ranks)) return rc;
  return e->win->start(ranks, assert_flags);
}

int mmpi_impl_Win_complete(MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->complete();
}

int mmpi_impl_Win_wait(MPI_Win win) {
  WinEntry* e = find_win(win);
  return e == nullptr ? MPI_ERR_WIN : e->win->wait();
}

int mmpi_impl_Win_test(MPI_Win win, int* flag) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  bool f = false;
  const int rc = e->win->test(&f);
  *flag = f;
  return rc;
}

}  // extern "C"
