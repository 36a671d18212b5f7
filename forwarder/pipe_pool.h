// zipperd's pipes for spliced payloads (proto/payload_pipe.h). At most
// `max_pipes` exist at once; a released pipe is kept for the next payload, so
// a relayed chunk costs no pipe2() or F_SETPIPE_SZ. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "../proto/payload_pipe.h"

namespace zipper::forwarder {

class PipePool {
 public:
  /// `max_pipes` pipes of `capacity` bytes each at most (0 pipes: splicing off).
  PipePool(std::size_t max_pipes, std::size_t capacity);

  /// Smallest payload worth a pipe (bytes): below it, a copy costs less than
  /// the extra splice() calls.
  static constexpr std::size_t kMinPayload = 16 * 1024;

  /// An empty pipe for a payload of `bytes`, or nullptr when the payload is
  /// too small or too large for one, every pipe is in use, or no pipe can be
  /// created now (descriptors, the per-user pipe limit): the caller copies.
  /// The pipe returns to the pool when the last reference drops; one that
  /// still holds bytes (a frame dropped half-sent) is closed instead.
  std::shared_ptr<proto::PayloadPipe> acquire(std::size_t bytes);

  struct Stats {
    std::uint64_t spliced_frames = 0;  // payloads given a pipe so far
    std::uint64_t spliced_bytes = 0;   // their bytes
    std::uint64_t no_pipe = 0;         // payloads copied for lack of a pipe
    std::uint32_t pipes = 0;           // pipes open now
    std::uint32_t in_use = 0;          // of those, holding a payload
  };
  Stats stats() const;

 private:
  struct State;
  std::shared_ptr<State> st_;  // shared with the deleters of pipes handed out
};

}  // namespace zipper::forwarder
