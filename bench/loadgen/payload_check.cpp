#include "payload_check.h"

#include <time.h>

#include <algorithm>
#include <cstring>

namespace zipper::loadgen {

namespace {

// SplitMix64: cheap, and every seed gives a different sequence.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t seed(std::uint64_t job, std::uint32_t src, std::uint32_t dst, std::uint64_t seq) {
  return mix(mix(mix(job) ^ ((std::uint64_t{src} << 32) | dst)) ^ seq);
}

// Calls `f(offset, word)` for each 8-byte word of the payload (the last may be partial).
template <class F>
void words(std::uint64_t s, std::size_t n, F&& f) {
  for (std::size_t off = 0; off < n; off += 8) {
    s = mix(s);
    f(off, s);
  }
}

}  // namespace

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void fill_payload(std::uint64_t job, std::uint32_t src, std::uint32_t dst, std::uint64_t seq,
                  std::span<std::byte> out) {
  words(seed(job, src, dst, seq), out.size(), [&](std::size_t off, std::uint64_t w) {
    std::memcpy(out.data() + off, &w, std::min<std::size_t>(8, out.size() - off));
  });
}

std::size_t check_payload(std::uint64_t job, std::uint32_t src, std::uint32_t dst,
                          std::uint64_t seq, std::span<const std::byte> in) {
  std::size_t bad = in.size();
  words(seed(job, src, dst, seq), in.size(), [&](std::size_t off, std::uint64_t w) {
    if (bad != in.size()) return;
    const std::size_t n = std::min<std::size_t>(8, in.size() - off);
    std::byte want[8];
    std::memcpy(want, &w, 8);
    for (std::size_t i = 0; i < n; ++i)
      if (in[off + i] != want[i]) {
        bad = off + i;
        return;
      }
  });
  return bad;
}

void stamp_send_time(proto::FrameHeader& h, std::uint64_t ns) {
  h.tag = static_cast<std::int32_t>(static_cast<std::uint32_t>(ns >> 32));
  h.context_id = static_cast<std::uint32_t>(ns);
}

std::uint64_t send_time(const proto::FrameHeader& h) {
  return (std::uint64_t{static_cast<std::uint32_t>(h.tag)} << 32) | h.context_id;
}

}  // namespace zipper::loadgen
