// A kernel pipe that holds one frame's payload while zipperd relays it from
// one TCP link to another: splice() moves the payload's pages socket -> pipe
// -> socket by reference, so zipperd copies none of its bytes (the sender's
// and the receiver's kernels copy once each, as for native TCP).
//
// Why: on a TCP -> TCP relay, reading a chunk into a buffer and writing it out
// again costs zipperd two copies of every byte on the cores the ranks also
// use; splice leaves only the header in user space (docs/performance.md).
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "payload.h"
#include "unique_fd.h"

namespace zipper::proto {

class PayloadPipe {
 public:
  /// A non-blocking pipe able to hold `capacity` bytes (F_SETPIPE_SZ, rounded
  /// up to pages by the kernel), or nullptr when it cannot be had (out of
  /// descriptors, the per-user pipe limit): the caller copies instead.
  static std::unique_ptr<PayloadPipe> create(std::size_t capacity);

  /// Largest payload this pipe takes without risk of running out of slots
  /// (bytes): a slot holds one fragment of a received packet, at least about
  /// 1 KiB (an MSS-sized segment), so a quarter of the capacity.
  std::size_t max_payload() const { return capacity_ / 4; }
  /// Payload bytes in the pipe now.
  std::size_t held() const { return held_; }

  /// Moves up to `n` bytes from socket `fd` into the pipe. Returns the bytes
  /// moved, 0 at end of stream, or -1 with errno (EAGAIN: nothing to read).
  long fill_from(int fd, std::size_t n);
  /// Copies `bytes` into the pipe (payload bytes a read already brought into
  /// user space). Returns false with errno when the pipe does not take them all.
  bool write_bytes(std::span<const std::byte> bytes);
  /// Moves up to `n` held bytes to socket `fd`; `more` says another frame
  /// follows at once (MSG_MORE). Returns the bytes moved or -1 with errno
  /// (EAGAIN: the socket is full).
  long drain_to(int fd, std::size_t n, bool more);
  /// Reads every held byte into `out` (size() >= held()), for a link that
  /// cannot splice. Returns false with errno on failure.
  bool read_all(std::span<std::byte> out);

 private:
  PayloadPipe(UniqueFd rd, UniqueFd wr, std::size_t capacity)
      : rd_(std::move(rd)), wr_(std::move(wr)), capacity_(capacity) {}

  UniqueFd rd_, wr_;
  std::size_t capacity_ = 0;  // bytes
  std::size_t held_ = 0;      // bytes
};

/// Moves a piped payload's bytes into `p.bytes` and drops the pipe; a no-op
/// for other payloads. Returns false with errno when the pipe cannot be read.
bool materialize(Payload& p);

}  // namespace zipper::proto
