// Frames zipperd itself sends to a client (errors, credit, CHALLENGE,
// HELLO_ACK, JOB_READY, PING answers): queued on the connection's link and
// written at once from the calling thread; the side's send thread finishes
// what the socket does not take.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../proto/frame.h"
#include "../proto/link.h"
#include "connection.h"

namespace zipper::forwarder {

/// Queues `frame` to `conn` and tries to write it now. Dropped when the
/// connection is closed, except an ERROR (the last word a closing connection
/// gets). A send that fails shuts the link down; its receive thread closes it.
void send_control(const std::shared_ptr<Connection>& conn, proto::OutFrame frame);

/// Sends an ERROR frame: `code`, about rank `about_rank` and frame `seq`,
/// with `text` (cut to 1024 bytes) as its payload. `version`: the header's
/// protocol version (another than ours only to answer a peer of that
/// version, whose header has the same layout).
void send_error(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
                std::uint32_t about_rank, std::uint64_t seq, const std::string& text,
                std::uint16_t version = proto::kVersion);

}  // namespace zipper::forwarder
