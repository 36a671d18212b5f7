// A span of payload bytes together with whatever keeps them alive.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace zipper::proto {

class PayloadPipe;

/// Payload bytes of one frame. `owner` keeps the storage alive; dropping the
/// last copy releases it (in zipperd this also returns credit and budget).
/// `bytes` may point into user memory (zero copy), in which case `owner` may be
/// empty and the caller guarantees the memory outlives the frame.
struct Payload {
  std::span<std::byte> bytes;
  std::shared_ptr<void> owner;
  /// Memory around `bytes` that `owner` keeps alive just as long (e.g. the
  /// whole message buffer a rendezvous chunk belongs to); empty = `bytes`
  /// only. A link that registers memory with a device (verbs) registers the
  /// extent once for every payload inside it that shares `owner`.
  std::span<std::byte> extent{};
  /// When set, the payload's bytes are in this kernel pipe, not in `bytes`
  /// (zipperd's TCP -> TCP relay, payload_pipe.h); `bytes` is then the pool
  /// buffer that accounts for them. A link that cannot splice calls
  /// materialize() (payload_pipe.h) before it reads `bytes`.
  std::shared_ptr<PayloadPipe> pipe{};

  /// Allocates `n` bytes on the heap.
  static Payload allocate(std::size_t n) {
    std::shared_ptr<std::byte[]> mem(new std::byte[n == 0 ? 1 : n]);
    return Payload{std::span<std::byte>(mem.get(), n), std::shared_ptr<void>(mem, mem.get())};
  }
  /// Refers to caller-owned memory; no ownership.
  static Payload borrow(void* p, std::size_t n) {
    return Payload{std::span<std::byte>(static_cast<std::byte*>(p), n), nullptr};
  }
};

}  // namespace zipper::proto
