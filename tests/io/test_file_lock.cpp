// The aux file's byte-range lock (capi/file_lock.h), without MPI: the shared
// file pointer's read-modify-write and atomic mode's exclusion both rest on
// it. Two open file descriptions of one file stand for two ranks (OFD locks
// conflict between descriptions, even in one process), and a forked child
// for a rank on another node that dies holding the lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "capi/file_lock.h"
#include "capi/file_state.h"

namespace {

using zipper::capi::kAuxAtomicLock;
using zipper::capi::kAuxSharedPointer;
using zipper::capi::RangeLock;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
// The wait a rank's MMPI_FILE_LOCK_TIMEOUT gives (FileState::lock_timeout):
// short, so that giving up is seen within the test.
constexpr std::chrono::seconds kTimeout{1};

// An aux-like file, unlinked at once, and a second description of it.
class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/zipper_file_lock.XXXXXX";
    fd_a_ = ::mkstemp(path);
    ASSERT_GE(fd_a_, 0);
    fd_b_ = ::open(path, O_RDWR | O_CLOEXEC);  // another description: another "rank"
    ASSERT_GE(fd_b_, 0);
    path_ = path;
  }
  void TearDown() override {
    ::close(fd_a_);
    ::close(fd_b_);
    ::unlink(path_.c_str());
  }
  // True when description `fd` could take a write lock on [start, start+len) now.
  static bool free_now(int fd, off_t start, off_t len) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) return false;
    return fl.l_type == F_UNLCK;
  }

  int fd_a_ = -1, fd_b_ = -1;
  std::string path_;
};

TEST_F(FileLockTest, HeldForItsLifetimeAndReleasedAfter) {
  {
    RangeLock lock(fd_a_, kAuxSharedPointer, 16, true, kTimeout);
    ASSERT_TRUE(lock.ok());
    EXPECT_FALSE(free_now(fd_b_, kAuxSharedPointer, 16));
    // The atomic-mode byte is another range: not held by the pointer's lock.
    EXPECT_TRUE(free_now(fd_b_, kAuxAtomicLock, 1));
  }
  EXPECT_TRUE(free_now(fd_b_, kAuxSharedPointer, 16));
}

// A contended lock is taken once its holder lets go (within the timeout).
TEST_F(FileLockTest, ContendedLockIsTakenWhenReleased) {
  auto holder = std::make_unique<RangeLock>(fd_a_, kAuxAtomicLock, 1, true, kTimeout);
  ASSERT_TRUE(holder->ok());
  std::thread release([&] {
    std::this_thread::sleep_for(milliseconds(200));
    holder.reset();
  });
  const auto t0 = Clock::now();
  RangeLock waiter(fd_b_, kAuxAtomicLock, 1, true, kTimeout);
  const auto waited = Clock::now() - t0;
  release.join();
  EXPECT_TRUE(waiter.ok());
  EXPECT_GE(waited, milliseconds(150)) << "took the lock while another description held it";
}

// A holder that never lets go: the waiter gives up after
// its timeout (1 s here) with ok() false (the caller's MPI_ERR_IO),
// never hangs, and holds nothing.
TEST_F(FileLockTest, GivesUpAfterTheTimeout) {
  RangeLock holder(fd_a_, kAuxAtomicLock, 1, true, kTimeout);
  ASSERT_TRUE(holder.ok());
  const auto t0 = Clock::now();
  RangeLock waiter(fd_b_, kAuxAtomicLock, 1, true, kTimeout);
  const auto waited = Clock::now() - t0;
  EXPECT_FALSE(waiter.ok());
  EXPECT_GE(waited, milliseconds(900));
  EXPECT_LT(waited, std::chrono::seconds(30));  // bounded, with room for a loaded host
}

// Readers of the shared pointer share; a writer waits for them.
TEST_F(FileLockTest, ReadersShareAWriterWaits) {
  RangeLock r1(fd_a_, kAuxSharedPointer, 16, false, kTimeout);
  RangeLock r2(fd_b_, kAuxSharedPointer, 16, false, kTimeout);
  EXPECT_TRUE(r1.ok());
  EXPECT_TRUE(r2.ok());
  const int fd_c = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd_c, 0);
  {
    RangeLock w(fd_c, kAuxSharedPointer, 16, true, kTimeout);
    EXPECT_FALSE(w.ok());
  }
  ::close(fd_c);
}

// A rank that dies holding the lock (SIGKILL: no destructor runs) does not
// keep it: the kernel drops an OFD lock with the last descriptor of its
// description, and the next rank takes it at once.
TEST_F(FileLockTest, ALockHeldByADeadProcessIsFree) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(path_.c_str(), O_RDWR);
    RangeLock lock(fd, kAuxAtomicLock, 1, true, kTimeout);
    const char c = lock.ok() ? 'y' : 'n';
    [[maybe_unused]] auto w = ::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  {
    RangeLock blocked(fd_a_, kAuxAtomicLock, 1, true, kTimeout);
    EXPECT_FALSE(blocked.ok()) << "the child's lock did not hold";
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  const auto t0 = Clock::now();
  RangeLock after(fd_a_, kAuxAtomicLock, 1, true, kTimeout);
  EXPECT_TRUE(after.ok());
  EXPECT_LT(Clock::now() - t0, milliseconds(500)) << "waited on a dead holder";
  ::close(ready[0]);
  ::close(ready[1]);
}

// Not a lockable descriptor: ok() false at once (EBADF is not retried).
TEST_F(FileLockTest, BadDescriptorFailsAtOnce) {
  const auto t0 = Clock::now();
  RangeLock bad(-1, kAuxAtomicLock, 1, true, kTimeout);
  EXPECT_FALSE(bad.ok());
  EXPECT_LT(Clock::now() - t0, milliseconds(500));
}

}  // namespace
