// Tunables of the verbs link, read from the environment once per link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zipper::proto::verbs {

/// RDMA CM port zipperd listens on for `verbs:DEVICE:PORT` addresses.
inline constexpr std::uint16_t kDefaultVerbsPort = 7471;

struct Config {
  std::uint32_t recv_buffers = 32;  // ZIPPER_VERBS_RECV_BUFFERS: receives pre-posted (credits)
  std::uint32_t buffer_size =
      64 * 1024;                       // ZIPPER_VERBS_BUFFER_SIZE: bytes per receive buffer / SEND
  std::uint32_t send_slots = 32;       // ZIPPER_VERBS_SEND_SLOTS: registered send staging buffers
  std::uint32_t inline_max = 128;      // ZIPPER_VERBS_INLINE: SENDs up to this many bytes go inline
  std::size_t zcopy_min = 256 * 1024;  // ZIPPER_VERBS_ZCOPY_MIN: payload bytes from which owned
                                       // payloads are sent from an MR-cache registration (0: never)
  std::size_t write_min = 128 * 1024;  // ZIPPER_VERBS_WRITE_MIN: payload bytes from which a frame's
                                       // payload goes by RDMA WRITE with immediate into the
                                       // receiver's registered buffer (0: never; chunked SENDs)
  std::uint8_t ack_timeout = 17;       // ZIPPER_VERBS_ACK_TIMEOUT: QP local ACK timeout exponent,
                                       // 4.096 us * 2^N per try (17: 0.54 s; 8 tries before a
                                       // dead peer fails a send)
  std::uint32_t keepalive_ms = 1000;   // ZIPPER_VERBS_KEEPALIVE_MS: a receiving link idle this long
                                       // probes the peer with a credit SEND, so a dead peer
                                       // surfaces as a send error (0: never)
  std::uint32_t spin_us = 10;        // ZIPPER_VERBS_SPIN_US: idle polling before the caller sleeps
  bool busy_poll = false;            // ZIPPER_VERBS_POLL=busy: connect()ed links never let
                                     // the caller sleep (poll_fd always readable)
  int resolve_timeout_ms = 2000;     // ZIPPER_VERBS_RESOLVE_MS: address/route resolution, per try
  std::uint32_t srq_threshold = 32;  // ZIPPER_VERBS_SRQ_THRESHOLD: links on one device beyond
                                     // this many share an SRQ (0: every link)
  std::uint32_t srq_credits = 16;    // ZIPPER_VERBS_SRQ_CREDITS: receives an SRQ link grants its
                                     // peer (the SRQ grows by as many buffers)
  std::uint32_t srq_max_wr = 16384;  // ZIPPER_VERBS_SRQ_MAX_WR: receives one SRQ holds at most
                                     // (capped by the device); links beyond keep their own
  std::string source;                // ZIPPER_VERBS_SOURCE: source IPv4 for connect (default:
                                     // the local address on the destination's subnet)

  /// Reads the environment; throws std::invalid_argument naming the variable
  /// on a malformed or out-of-range value.
  static Config from_env();
};

}  // namespace zipper::proto::verbs
