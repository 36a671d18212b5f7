// Why a connection's receive is paused (parked) in zipperd. Each reason has
// its own wake-up: memory released anywhere wakes kPoolMemory, only the
// connection's own job releasing a frame wakes kJobShare (flow_control.h).
#pragma once

#include <cstdint>

namespace zipper::forwarder {

enum class ParkReason : std::uint8_t {
  kNone,        // receiving
  kPoolMemory,  // no pool buffer was free (the global budget, --max-memory)
  // The job holds its fair share of memory or of a pool class, or the frame's
  // destination holds its credit's worth of frames: only one of the job's
  // own frames leaving zipperd can let it go on.
  kJobShare,
};

}  // namespace zipper::forwarder
