// Routing in zipperd: the destination of a frame is a rank of the sender's
// own job, looked up in that job's rank table only (job_registry.h), so a
// rank can never address another job's ranks. The destination rank's site
// (the job's site table) decides first: this bridge joins every site of the
// jobs it admits (legs are sites, admission.h), so the rank's connection is
// on that site's leg; relaying a frame on to another bridge, for a site this
// one does not join, is not there yet (docs/sites.md).
#pragma once

#include <cstdint>
#include <memory>

#include "../proto/frame.h"
#include "connection.h"

namespace zipper::forwarder {

/// Frames relayed to another rank (and charged to its inbound credit);
/// everything else is for zipperd itself (HELLO, AUTH, PING, BYE...).
bool is_data_frame(proto::FrameType t);

/// The connection serving rank `vrank` of `from`'s job, or nullptr when
/// `vrank` is in none of the job's sites or not connected. `from` must be
/// admitted. Remembers the
/// last answer in `from` (a weak reference, re-checked for closing), so a
/// stream of frames to one rank takes the job's lock once: receive thread of
/// `from` only.
std::shared_ptr<Connection> route(Connection& from, std::uint32_t vrank);

}  // namespace zipper::forwarder
