// What zipperd's collaborators (Admission, FlowControl, ConnectionSink) ask
// of the forwarder that owns the connections and their threads. The small
// interface keeps them from importing the Forwarder itself.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "../proto/frame.h"
#include "../proto/link.h"
#include "connection.h"

namespace zipper::forwarder {

class ConnectionHost {
 public:
  virtual ~ConnectionHost() = default;
  /// Handles one complete frame from `conn` (receive thread of `conn`):
  /// admission before the job is joined, relay after.
  virtual void on_frame(const std::shared_ptr<Connection>& conn, const proto::FrameHeader& hdr,
                        proto::Payload payload) = 0;
  /// Closes `conn` and tells its job's other ranks why (receive thread of
  /// `conn`, or any thread at shutdown). Idempotent.
  virtual void close_conn(const std::shared_ptr<Connection>& conn, const std::string& why) = 0;
  /// Wakes every side's receive loop: parked connections retry (any thread).
  virtual void wake_receivers() = 0;
  /// Runs `task` on the reaper thread, off the relay threads (reaper.h): for
  /// work that grows with a job, e.g. a notice to each of its ranks (any
  /// thread; O(1) for the caller).
  virtual void defer(std::function<void()> task) = 0;
};

}  // namespace zipper::forwarder
