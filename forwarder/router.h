// Routing in zipperd: the destination of a frame is a rank of the sender's
// own job, looked up in that job's rank table only (job_registry.h), so a
// rank can never address another job's ranks.
#pragma once

#include <cstdint>
#include <memory>

#include "../proto/frame.h"
#include "connection.h"

namespace zipper::forwarder {

/// Frames relayed to another rank (and charged to its inbound credit);
/// everything else is for zipperd itself (HELLO, AUTH, PING, BYE...).
bool is_data_frame(proto::FrameType t);

/// The connection serving rank `vrank` of `from`'s job, or nullptr when no
/// rank of that number is connected. `from` must be admitted. Remembers the
/// last answer in `from` (a weak reference, re-checked for closing), so a
/// stream of frames to one rank takes the job's lock once: receive thread of
/// `from` only.
std::shared_ptr<Connection> route(Connection& from, std::uint32_t vrank);

}  // namespace zipper::forwarder
