// Byte-range locks on a spanning file's aux file (file_state.h): the shared
// file pointer's read-modify-write and atomic mode's mutual exclusion across
// the clusters. Open-file-description locks (F_OFD_SETLK), so that two files
// open in one process never release each other's locks; on a shared file
// system they need its lock service (Lustre: mount with -o flock; NFS: lockd).
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <chrono>
#include <optional>

namespace zipper::capi {

/// Holds an F_WRLCK (or F_RDLCK) on [start, start+len) of fd until destroyed.
/// Waits at most `timeout` (FileState::lock_timeout, MMPI_FILE_LOCK_TIMEOUT);
/// ok() is false when it gave up or fcntl failed (the caller returns
/// MPI_ERR_IO).
class RangeLock {
 public:
  RangeLock(int fd, off_t start, off_t len, bool exclusive, std::chrono::seconds timeout);
  ~RangeLock();
  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;
  bool ok() const { return locked_; }

 private:
  int fd_;
  off_t start_, len_;
  bool locked_ = false;
};

struct FileState;

/// Atomic mode's exclusion for one data access call on a spanning file:
/// nothing when the file is not in atomic mode; an independent call locks
/// the aux file's atomic range itself; a collective call has rank 0 of this
/// cluster's native communicator lock it once every rank of the cluster is
/// inside the call, and keep it until every rank is done (native barriers
/// on both sides), so that no rank holds it while waiting on a peer that
/// waits for it. Native atomic mode orders the
/// ranks within a cluster; this lock orders the two clusters' calls.
class AtomicSection {
 public:
  AtomicSection(const FileState* s, bool collective, bool write);
  ~AtomicSection();
  AtomicSection(const AtomicSection&) = delete;
  AtomicSection& operator=(const AtomicSection&) = delete;
  /// MPI_SUCCESS, or MPI_ERR_IO when the lock could not be taken (on every
  /// rank of the cluster for a collective call).
  int rc() const { return rc_; }

 private:
  const FileState* s_ = nullptr;
  bool collective_ = false;
  std::optional<RangeLock> lock_;
  int rc_ = MPI_SUCCESS;
};

}  // namespace zipper::capi
