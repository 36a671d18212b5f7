#include "file_lock.h"

#include <fcntl.h>
#include <time.h>

#include <cerrno>
#include <chrono>

#include "file_state.h"

namespace zipper::capi {

namespace {

bool set_lock(int fd, short type, off_t start, off_t len) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

}  // namespace

RangeLock::RangeLock(int fd, off_t start, off_t len, bool exclusive, std::chrono::seconds timeout)
    : fd_(fd), start_(start), len_(len) {
  // Polled, not F_OFD_SETLKW: a peer that hangs holding the lock must not
  // hang this rank forever. Backoff from 2 us to 1 ms keeps an uncontended
  // lock at one system call and a contended one cheap.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  long pause_ns = 2000;
  for (;;) {
    if (set_lock(fd_, exclusive ? F_WRLCK : F_RDLCK, start_, len_)) {
      locked_ = true;
      return;
    }
    if (errno != EAGAIN && errno != EACCES && errno != EINTR) return;
    if (std::chrono::steady_clock::now() >= deadline) return;
    const timespec ts{0, pause_ns};
    nanosleep(&ts, nullptr);
    pause_ns = pause_ns < 1000000 ? pause_ns * 2 : 1000000;
  }
}

RangeLock::~RangeLock() {
  if (locked_) set_lock(fd_, F_UNLCK, start_, len_);
}

AtomicSection::AtomicSection(const FileState* s, bool collective, bool write)
    : s_(s), collective_(collective) {
  if (s_ == nullptr || !s_->atomic) return;
  if (!collective_) {
    lock_.emplace(s_->aux.get(), kAuxAtomicLock, 1, write, s_->lock_timeout);
    if (!lock_->ok()) rc_ = MPI_ERR_IO;
    return;
  }
  // Only once every rank of the cluster is inside this call may rank 0 take
  // the lock: a peer still waiting for it in an earlier independent access
  // would otherwise never arrive.
  MPI_Barrier(s_->native_comm);
  int me = 0;
  MPI_Comm_rank(s_->native_comm, &me);
  int ok = 1;
  if (me == 0) {
    lock_.emplace(s_->aux.get(), kAuxAtomicLock, 1, true, s_->lock_timeout);
    ok = lock_->ok() ? 1 : 0;
  }
  // Everyone learns whether the cluster holds the lock (and waits for it).
  MPI_Bcast(&ok, 1, MPI_INT, 0, s_->native_comm);
  if (!ok) rc_ = MPI_ERR_IO;
}

AtomicSection::~AtomicSection() {
  if (s_ == nullptr || !s_->atomic) return;
  // The collective call is over on every rank of the cluster before rank 0
  // lets the other cluster in.
  if (collective_) MPI_Barrier(s_->native_comm);
  lock_.reset();
}

}  // namespace zipper::capi
