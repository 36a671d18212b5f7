// What each message of the load generator carries, so that the receiver can
// check every byte: the payload is a pseudo-random sequence determined by
// (job, source, destination, sequence number), the sequence number travels
// in the header's seq field, and the send time (CLOCK_MONOTONIC, shared by
// every process on the host) in the header's tag and context_id fields,
// which zipperd relays untouched. A frame delivered to the wrong rank, out
// of order, twice, truncated or altered fails the check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "../../proto/frame.h"

namespace zipper::loadgen {

/// Nanoseconds of CLOCK_MONOTONIC.
std::uint64_t now_ns();

/// Fills `out` with the payload of message `seq` from `src` to `dst` of job `job`.
void fill_payload(std::uint64_t job, std::uint32_t src, std::uint32_t dst, std::uint64_t seq,
                  std::span<std::byte> out);
/// Offset of the first byte of `in` that differs from fill_payload's, or
/// `in.size()` when every byte matches.
std::size_t check_payload(std::uint64_t job, std::uint32_t src, std::uint32_t dst,
                          std::uint64_t seq, std::span<const std::byte> in);

/// Puts `ns` (a now_ns() value) in the header's tag and context_id.
void stamp_send_time(proto::FrameHeader& h, std::uint64_t ns);
std::uint64_t send_time(const proto::FrameHeader& h);

}  // namespace zipper::loadgen
