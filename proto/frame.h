// Wire format shared by zipperd and libmmpi: one fixed 64-byte little-endian
// header, optionally followed by payload bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace zipper::proto {

inline constexpr std::uint32_t kMagic = 0x5A495050;  // "ZIPP"
/// The wire protocol's version: 2 carries the job's site table in HELLO
/// (site_hello.h); 1 carried a two-group layout. A peer of another version is
/// refused (DecodeError::kBadVersion).
inline constexpr std::uint16_t kVersion = 2;
inline constexpr std::size_t kHeaderSize = 64;  // bytes on the wire
/// Hard upper bound on one frame's payload (bytes); links may configure less.
inline constexpr std::uint32_t kMaxPayloadLimit = 64u << 20;

enum class FrameType : std::uint8_t {
  kHello = 1,       // client -> zipperd: payload SiteHello (site_hello.h; + auth proof)
  kHelloAck = 2,    // zipperd -> client: payload HelloAckPayload
  kJobReady = 3,    // zipperd -> client: every rank of the job has connected
  kEager = 4,       // a whole message; payload = message bytes
  kRts = 5,         // rendezvous request-to-send: msg_len = message bytes, no payload
  kCts = 6,         // rendezvous clear-to-send (receiver -> sender): msg_len = bytes accepted
  kChunk = 7,       // rendezvous data at chunk_offset, payload_len bytes
  kCredit = 8,      // credits (frames) returned by zipperd; no payload
  kError = 9,       // error report: flags = ErrorCode, payload = UTF-8 text
  kBye = 10,        // orderly close
  kChallenge = 11,  // zipperd -> client after HELLO: payload ChallengePayload (proto/auth.h)
  kAuth = 12,       // client -> zipperd: payload AuthPayload, the answer to the challenge
  kPing = 13,       // client -> zipperd health probe; zipperd answers with flags kPong, same seq
  kAbort = 14,      // MMPI_Abort: tag = error code; client -> zipperd, relayed to the ranks
                    // of every other site with src = the aborting rank; no payload, no credit
};
inline constexpr std::uint8_t kMaxFrameType = 14;

/// kPing flags: zipperd's answer.
inline constexpr std::uint8_t kPong = 1;
/// kCts flags (client to client, relayed like any CTS) for striping over
/// several forwarders (client/peer_transport.h, which says why they are not frame
/// types of their own): end-to-end acknowledgements.
/// kCtsAck: every EAGER/RTS header with seq < `seq` from the receiver's peer arrived.
inline constexpr std::uint8_t kCtsAck = 1;
/// kCtsFin: the rendezvous message `seq` arrived whole.
inline constexpr std::uint8_t kCtsFin = 2;

/// Error codes carried in the flags byte of a kError frame.
enum class ErrorCode : std::uint8_t {
  kMalformed = 1,      // the peer sent a frame that failed decoding
  kUnknownJob = 2,     // job id not registered / hello required first
  kBadHello = 3,       // hello inconsistent with the job's site table, or duplicate rank
                       // (also: the rank speaks another protocol version)
  kPeerGone = 4,       // destination rank is not (or no longer) connected; src = that rank
                       // (0xffffffff: the job lost several ranks and is broken; Job::kAllRanks)
  kCreditOverrun = 5,  // sender exceeded its granted credits
  kAuth = 6,           // authentication failed
  kDraining = 7,       // zipperd is draining: clients with other forwarders move their traffic
};

/// Decoded frame header. All integers travel little-endian.
struct FrameHeader {
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  FrameType type = FrameType::kEager;
  std::uint8_t flags = 0;
  std::uint64_t job_id = 0;
  std::uint32_t src = 0;  // virtual rank of the original sender
  std::uint32_t dst = 0;  // virtual rank of the final receiver
  std::int32_t tag = 0;
  std::uint32_t context_id = 0;    // communicator context
  std::uint64_t seq = 0;           // per (src,dst) pair message sequence number
  std::uint32_t payload_len = 0;   // bytes following this header
  std::uint32_t credits = 0;       // credit returned (zipperd -> client): frames
  std::uint64_t msg_len = 0;       // whole message length (bytes)
  std::uint64_t chunk_offset = 0;  // byte offset of this chunk within the message
};

enum class DecodeError : std::uint8_t {
  kOk = 0,
  kTruncated,  // fewer than kHeaderSize bytes available
  kBadMagic,
  kBadVersion,
  kBadType,
  kOversize,   // payload_len above the configured maximum
  kBadLength,  // length fields inconsistent (e.g. chunk past msg_len)
};

std::string_view to_string(DecodeError e);
std::string_view to_string(FrameType t);
std::string_view to_string(ErrorCode c);

/// Serialises `h` into exactly kHeaderSize bytes.
void encode_header(const FrameHeader& h, std::span<std::byte, kHeaderSize> out);

/// Decodes and validates a header. `max_payload` (bytes) bounds payload_len.
/// Never reads past `in`; on error `*out` is unspecified, except for
/// kBadVersion: out->magic and out->version then hold the peer's (so that
/// the refusal can name both versions).
DecodeError decode_header(std::span<const std::byte> in, std::uint32_t max_payload,
                          FrameHeader* out);

/// Least payload of a kHello frame (bytes): a SiteHello's fixed fields
/// (site_hello.h), so that its decoder names a table of 0 sites.
inline constexpr std::size_t kHelloMinPayload = 20;

/// kHelloAck payload.
struct HelloAckPayload {
  std::uint32_t credits = 0;      // initial credit grant: frames zipperd may hold
  std::uint32_t max_payload = 0;  // largest payload zipperd accepts (bytes)
  // zipperd's key confirmation (auth::confirm_tag): proves to the rank that
  // this listener holds the host key it presented.
  std::array<std::byte, 32> confirm{};
};
inline constexpr std::size_t kHelloAckSize = 8 + 32;

void encode_hello_ack(const HelloAckPayload& p, std::span<std::byte, kHelloAckSize> out);
bool decode_hello_ack(std::span<const std::byte> in, HelloAckPayload* out);

/// Credit one frame consumes at zipperd: one buffer, whatever its size (as
/// Lustre LNet's peer credits). zipperd's pools bound the bytes.
inline constexpr std::uint64_t credit_cost(std::uint32_t /*payload_len*/) { return 1; }

}  // namespace zipper::proto
