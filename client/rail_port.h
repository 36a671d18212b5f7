// The two faces between the rails (rails.h) and the delivery layer above
// them (peer_transport.h): RailPort is what the delivery layer asks of the
// rails, RailHandler what the rails tell it. Both are small so that the
// delivery layer can be tested against a fake set of rails, without MPI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "../proto/link.h"

namespace zipper::client {

/// What the rails do for the delivery layer.
class RailPort {
 public:
  virtual ~RailPort() = default;
  /// Number of rails (k).
  virtual int size() const = 0;
  /// Rail `i` takes new frames (up or draining).
  virtual bool usable(int i) const = 0;
  /// The rail for pair traffic of the sender with index `local_index` in its
  /// cluster, not in `avoid` (bit i: rail i); -1 when none.
  virtual int pair_rail(int local_index, std::uint64_t avoid) const = 0;
  /// A usable rail with free credit for the next chunk, not in `avoid`; -1
  /// when every such rail waits for credit.
  virtual int chunk_rail(std::uint64_t avoid) = 0;
  /// Largest chunk payload (bytes) every rail takes.
  virtual std::uint64_t chunk_size() const = 0;
  /// Queues `f` on rail `i`.
  virtual void send(int i, proto::OutFrame f) = 0;
  virtual void flush() = 0;
  /// Rail `i` fails once its current receive call returned.
  virtual void fail_soon(int i, std::string why) = 0;
};

/// What the delivery layer does with frames from any rail, and with rail failures.
class RailHandler {
 public:
  virtual ~RailHandler() = default;
  /// Where the payload of a data frame arriving on `rail` should land.
  virtual std::optional<proto::Payload> payload_dest(int rail, const proto::FrameHeader& h) = 0;
  virtual void on_data_frame(int rail, const proto::FrameHeader& h, proto::Payload payload) = 0;
  /// zipperd of `rail` says world rank `vrank` is not connected to it.
  virtual bool on_peer_gone(int rail, int vrank, const std::string& why) = 0;
  /// `rail` is out of use (others are left): resend what crossed it.
  virtual void on_rail_failed(int rail) = 0;
  /// `rail` carries no new pair traffic (draining): move pairs off it.
  virtual void on_rail_draining(int rail) = 0;
  /// `rail` is back in use (every rank of the job reconnected to it).
  virtual void on_rail_rejoined(int rail) = 0;
  /// No rail is left: nothing crosses clusters any more.
  virtual void on_link_failed() = 0;
};

}  // namespace zipper::client
