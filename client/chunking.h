// Rendezvous chunk sizes through zipperd.
#pragma once

#include <algorithm>
#include <cstdint>

namespace zipper::client {

/// Smallest rendezvous chunk (bytes) unless MMPI_CHUNK_SIZE is smaller.
inline constexpr std::uint64_t kMinChunk = 16 * 1024;

/// Chunk size (bytes) for a rendezvous message of `msg_bytes` bytes: the
/// smallest power of two from kMinChunk up that is at least msg_bytes / 8,
/// capped at `max_chunk` (MMPI_CHUNK_SIZE).
///
/// Why: zipperd stores and forwards whole frames, so through its two hops a
/// message of M bytes takes about (M + largest chunk) / B. Chunks near M/8
/// keep that within 1.125 x one hop; kMinChunk bounds the frames (and system
/// calls) per byte for mid-sized messages.
constexpr std::uint64_t rendezvous_chunk(std::uint64_t msg_bytes, std::uint64_t max_chunk) {
  std::uint64_t c = kMinChunk;
  while (c < max_chunk && c * 8 < msg_bytes) c *= 2;
  return std::min(c, max_chunk);
}

}  // namespace zipper::client
