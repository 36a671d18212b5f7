// An owning file descriptor: sockets, epoll fds and eventfds in proto/ and
// zipperd are closed exactly once, by whoever owns them last.
#pragma once

#include <unistd.h>

#include <utility>

namespace zipper::proto {

/// Move-only owner of one file descriptor (-1 = none); closes it on
/// destruction or reset(). close() errors are ignored: by then the fd is gone
/// either way (POSIX leaves it unspecified, Linux always releases it).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  /// Gives up ownership without closing; returns the fd.
  int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the current fd (if any) and owns `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0 && fd_ != fd) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace zipper::proto
