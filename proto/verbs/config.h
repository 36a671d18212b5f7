// Tunables of the verbs link. Neither process reads them from the
// environment here: libmmpi takes them as ZIPPER_VERBS_* variables at
// MMPI_Init (client/settings.h), zipperd as [verbs] keys of its file or
// --verbs-* flags (forwarder/daemon_config.h); both parse them with set()
// below and hand the Config to proto::listen / proto::connect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zipper::proto::verbs {

/// RDMA CM port zipperd listens on for `verbs:DEVICE:PORT` addresses.
inline constexpr std::uint16_t kDefaultVerbsPort = 7471;

struct Config {
  std::uint32_t recv_buffers = 32;        // recv_buffers: receives pre-posted (credits)
  std::uint32_t buffer_size = 64 * 1024;  // buffer_size: bytes per receive buffer / SEND
  std::uint32_t send_slots = 32;          // send_slots: registered send staging buffers
  std::uint32_t inline_max = 128;         // inline: SENDs up to this many bytes go inline
  std::size_t zcopy_min = 256 * 1024;     // zcopy_min: payload bytes from which owned
                                       // payloads are sent from an MR-cache registration (0: never)
  std::size_t write_min = 128 * 1024;  // write_min: payload bytes from which a frame's
                                       // payload goes by RDMA WRITE with immediate into the
                                       // receiver's registered buffer (0: never; chunked SENDs)
  std::uint8_t ack_timeout = 17;       // ack_timeout: QP local ACK timeout exponent,
                                       // 4.096 us * 2^N per try (17: 0.54 s; 8 tries before a
                                       // dead peer fails a send)
  std::uint32_t keepalive_ms = 1000;   // keepalive_ms: a receiving link idle this long
                                       // probes the peer with a credit SEND, so a dead peer
                                       // surfaces as a send error (0: never)
  std::uint32_t spin_us = 10;          // spin_us: idle polling before the caller sleeps
  bool busy_poll = false;              // poll=busy: connect()ed links never let the caller sleep
                                       // (poll_fd always readable)
  int resolve_timeout_ms = 2000;       // resolve_ms: address/route resolution, per try
  std::uint32_t srq_threshold = 32;    // srq_threshold: links on one device beyond this many
                                       // share an SRQ (0: every link)
  std::uint32_t srq_credits = 16;      // srq_credits: receives an SRQ link grants its peer
                                       // (the SRQ grows by as many buffers)
  std::uint32_t srq_max_wr = 16384;    // srq_max_wr: receives one SRQ holds at most (capped by
                                       // the device); links beyond keep their own
  std::string source;                  // source: source IPv4 for connect (default: the local
                                       // address on the destination's subnet)
};

/// One row of the verbs settings: `key` in zipperd's [verbs] table (flag
/// --verbs-KEY with '_' as '-'), `env` for libmmpi.
struct SettingInfo {
  std::string key;       // "recv_buffers"
  std::string env;       // "ZIPPER_VERBS_RECV_BUFFERS"
  std::string type;      // count, bytes, ms, us, exponent, text, IPv4
  std::string fallback;  // the default, as set() takes it ("" for none)
  std::string check;     // what set() accepts
  bool integer;          // the value is a whole number (a TOML integer in zipperd's file)
  bool connect_only;     // only connect() reads it: zipperd, which only accepts, has no key
  std::string help;      // one line: what it does
};

/// Every verbs setting, each once, in a fixed order.
const std::vector<SettingInfo>& settings();

/// Sets the setting `key` (a SettingInfo::key) of *c from `text`. Returns ""
/// when accepted, else what is wrong ("expected an integer from 4 to 4096,
/// got '2'"), without naming the setting: the caller names its variable or
/// key. An unknown key is an error too. *c is unchanged on error.
std::string set(Config* c, std::string_view key, std::string_view text);

/// The setting `key` of `c` as set() takes it (`source`: "" when unset).
/// Throws std::invalid_argument for an unknown key.
std::string value_of(const Config& c, std::string_view key);

}  // namespace zipper::proto::verbs
