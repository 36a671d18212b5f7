// A rendezvous send as the delivery layer carries it (peer_transport.h): the
// message, what the receiver's CTS accepted, and which rail each chunk took.
// Kept apart from request.h so that the delivery layer needs no MPI.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zipper::client {

struct Request;  // request.h: handed back to the engine, never looked into

struct SendStream {
  Request* owner = nullptr;  // completed through DeliveryHandler::send_complete
  int peer = -1;             // destination world rank
  std::uint64_t seq = 0;     // the pair's sequence number of the RTS
  std::int32_t tag = 0;
  std::uint32_t context = 0;
  std::byte* data = nullptr;  // the message (packed when not contiguous)
  std::uint64_t bytes = 0;

  bool cts_seen = false;
  std::uint64_t accepted = 0;           // bytes the CTS accepted
  std::uint64_t chunk = 0;              // chunk size (bytes)
  std::vector<std::int8_t> chunk_rail;  // per chunk: the rail it went on, -1 not yet
  std::uint32_t next_unposted = 0;      // first chunk index that may be -1
  std::uint32_t chunks_left = 0;        // one rail: chunks not yet written
  std::chrono::steady_clock::time_point last_tx{};
};

}  // namespace zipper::client
