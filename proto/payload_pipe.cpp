#include "payload_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace zipper::proto {

std::unique_ptr<PayloadPipe> PayloadPipe::create(std::size_t capacity) {
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return nullptr;
  UniqueFd rd(fds[0]), wr(fds[1]);
  const int got = ::fcntl(wr.get(), F_SETPIPE_SZ, static_cast<int>(capacity));
  if (got < 0 || static_cast<std::size_t>(got) < capacity) return nullptr;
  return std::unique_ptr<PayloadPipe>(
      new PayloadPipe(std::move(rd), std::move(wr), static_cast<std::size_t>(got)));
}

long PayloadPipe::fill_from(int fd, std::size_t n) {
  const ssize_t r = ::splice(fd, nullptr, wr_.get(), nullptr, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (r > 0) held_ += static_cast<std::size_t>(r);
  return r;
}

bool PayloadPipe::write_bytes(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t w = ::write(wr_.get(), bytes.data(), bytes.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;  // EAGAIN: full; nothing in zipperd waits on it emptying
    }
    held_ += static_cast<std::size_t>(w);
    bytes = bytes.subspan(static_cast<std::size_t>(w));
  }
  return true;
}

long PayloadPipe::drain_to(int fd, std::size_t n, bool more) {
  unsigned flags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
  if (more) flags |= SPLICE_F_MORE;
  const ssize_t r = ::splice(rd_.get(), nullptr, fd, nullptr, n, flags);
  if (r > 0) held_ -= static_cast<std::size_t>(r);
  return r;
}

bool PayloadPipe::read_all(std::span<std::byte> out) {
  std::size_t got = 0;
  while (held_ > 0) {
    if (got >= out.size()) {
      errno = EOVERFLOW;
      return false;
    }
    const ssize_t r = ::read(rd_.get(), out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return false;
    }
    got += static_cast<std::size_t>(r);
    held_ -= static_cast<std::size_t>(r);
  }
  return true;
}

bool materialize(Payload& p) {
  if (!p.pipe) return true;
  const bool ok = p.pipe->read_all(p.bytes);
  p.pipe.reset();
  return ok;
}

}  // namespace zipper::proto
