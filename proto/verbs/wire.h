// What travels on a verbs link's QP besides frame bytes: the immediate data of
// every SEND and the RDMA CM private data of connection setup.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "../link.h"
#include "../site_hello.h"

namespace zipper::proto::verbs {

/// Kind of a SEND, in the top 4 bits of its immediate data; the low 16 bits
/// return credits (credits.h).
enum class SendKind : std::uint8_t {
  kFrameStart = 1,   // buffer = 64-byte frame header + first payload bytes
  kFrameCont = 2,    // buffer = further payload bytes of the current frame
  kCredit = 3,       // no data: returns credits only
  kFin = 4,          // no data: the sender will send nothing more (shutdown_send)
  kWriteHeader = 5,  // buffer = one 64-byte frame header; the payload follows by RDMA WRITE
  kWriteGrant = 6,   // buffer = WriteGrant: where the announced payload may be written
  kWriteData = 7,    // immediate of the RDMA WRITE that carried the payload (no buffer data)
};

/// kWriteGrant body, little-endian: the receiver's registered destination.
struct WriteGrant {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t len = 0;  // bytes (= the frame's payload_len)
};
inline constexpr std::size_t kWriteGrantSize = 16;

inline std::array<std::byte, kWriteGrantSize> encode_grant(const WriteGrant& g) {
  std::array<std::byte, kWriteGrantSize> out{};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((g.addr >> (8 * i)) & 0xFF);
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<std::byte>((g.rkey >> (8 * i)) & 0xFF);
  for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<std::byte>((g.len >> (8 * i)) & 0xFF);
  return out;
}

inline WriteGrant decode_grant(const std::byte* b) {
  WriteGrant g;
  for (int i = 0; i < 8; ++i) g.addr |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  for (int i = 0; i < 4; ++i) g.rkey |= static_cast<std::uint32_t>(b[8 + i]) << (8 * i);
  for (int i = 0; i < 4; ++i) g.len |= static_cast<std::uint32_t>(b[12 + i]) << (8 * i);
  return g;
}

inline constexpr std::uint32_t encode_imm(SendKind k, std::uint32_t credits) {
  return (static_cast<std::uint32_t>(k) << 28) | (credits & 0xFFFF);
}
inline constexpr SendKind imm_kind(std::uint32_t imm) { return static_cast<SendKind>(imm >> 28); }
inline constexpr std::uint32_t imm_credits(std::uint32_t imm) { return imm & 0xFFFF; }

/// RDMA CM private data both sides exchange: the receive buffers each side
/// pre-posted and, from the client (connect request), its hello when the
/// site table fits: job, the rank's site and virtual rank, and the ranks of
/// each site (wire protocol 2, site_hello.h). Little-endian, 56 bytes (what
/// a RoCE/IB connect request carries):
///   0 magic "ZVB2" | 4 version | 8 recv_buffers | 12 buffer_size |
///   16 flags (bit 0: hello present; bits 8-15: the rank's site; bits 16-23:
///   the number of sites n) | 20 vrank | 24 job_id (u64) |
///   32 ranks of site 0 .. site n-1 (u32 each, n <= kParamSites)
/// A hello of more sites travels as a HELLO frame instead.
struct ConnParams {
  static constexpr std::uint32_t kMagic = 0x5A564232;  // "ZVB2"
  static constexpr std::uint32_t kVersion = 3;         // 3: the site table (2: np_low/np_high)
  std::uint32_t recv_buffers = 0;                      // count
  std::uint32_t buffer_size = 0;                       // bytes each
  std::optional<ConnectHello> hello;
};
inline constexpr std::size_t kConnParamsSize = 56;
/// Most sites whose table fits in the private data.
inline constexpr std::size_t kParamSites = (kConnParamsSize - 32) / 4;

/// True when `h` fits in the private data (else it goes as a HELLO frame).
inline bool hello_fits(const ConnectHello& h) { return h.site_ranks.size() <= kParamSites; }

namespace detail {
inline void put32(std::byte* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
inline std::uint32_t get32(const unsigned char* b) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(b[i]) << (8 * i);
  return v;
}
}  // namespace detail

/// p.hello, when set, must fit (hello_fits); one that does not is left out.
inline std::array<std::byte, kConnParamsSize> encode_params(const ConnParams& p) {
  std::array<std::byte, kConnParamsSize> out{};
  detail::put32(&out[0], ConnParams::kMagic);
  detail::put32(&out[4], ConnParams::kVersion);
  detail::put32(&out[8], p.recv_buffers);
  detail::put32(&out[12], p.buffer_size);
  if (p.hello && hello_fits(*p.hello)) {
    const ConnectHello& h = *p.hello;
    const auto n = static_cast<std::uint32_t>(h.site_ranks.size());
    detail::put32(&out[16], 1u | ((h.site & 0xFFu) << 8) | (n << 16));
    detail::put32(&out[20], h.vrank);
    detail::put32(&out[24], static_cast<std::uint32_t>(h.job_id));
    detail::put32(&out[28], static_cast<std::uint32_t>(h.job_id >> 32));
    for (std::uint32_t s = 0; s < n; ++s) detail::put32(&out[32 + 4 * s], h.site_ranks[s]);
  }
  return out;
}

/// Decodes a peer's private data. Nullopt (and *why) when it is not a
/// zipper verbs peer of this version, or its hello is inconsistent (no
/// sites or more than fit, a site of 0 ranks, rank outside its site).
inline std::optional<ConnParams> decode_params(const void* data, std::size_t len,
                                               std::string* why) {
  if (data == nullptr || len < kConnParamsSize) {
    *why = "no zipper connection parameters in the RDMA CM private data (" + std::to_string(len) +
           " bytes)";
    return std::nullopt;
  }
  const auto* b = static_cast<const unsigned char*>(data);
  if (detail::get32(b) != ConnParams::kMagic) {
    *why = "the peer is not a zipper verbs endpoint (bad magic in the private data)";
    return std::nullopt;
  }
  if (detail::get32(b + 4) != ConnParams::kVersion) {
    *why = "zipper verbs protocol version " + std::to_string(detail::get32(b + 4)) +
           ", this side speaks " + std::to_string(ConnParams::kVersion);
    return std::nullopt;
  }
  ConnParams p;
  p.recv_buffers = detail::get32(b + 8);
  p.buffer_size = detail::get32(b + 12);
  const std::uint32_t flags = detail::get32(b + 16);
  if ((flags & 1u) != 0) {
    ConnectHello h;
    h.site = (flags >> 8) & 0xFFu;
    const std::uint32_t n = (flags >> 16) & 0xFFu;
    h.vrank = detail::get32(b + 20);
    h.job_id = detail::get32(b + 24) | (std::uint64_t{detail::get32(b + 28)} << 32);
    if (n == 0 || n > kParamSites) {
      *why = "hello: a site table of " + std::to_string(n) + " sites in the private data (1.." +
             std::to_string(kParamSites) + " fit)";
      return std::nullopt;
    }
    std::uint64_t sum = 0;  // at most 6 terms below 2^32: no wrap
    for (std::uint32_t s = 0; s < n; ++s) {
      h.site_ranks.push_back(detail::get32(b + 32 + 4 * s));
      sum += h.site_ranks.back();
    }
    // A sum past 2^32 is refused by check_site_table's own total.
    const auto world = static_cast<std::uint32_t>(std::min<std::uint64_t>(sum, 0xFFFFFFFFu));
    if (std::string bad = check_site_table(h.site_ranks, world, h.site, h.vrank); !bad.empty()) {
      *why = "hello: " + bad;
      return std::nullopt;
    }
    p.hello = std::move(h);
  }
  return p;
}

/// Private data of an rdma_reject() by zipperd: why the connect was refused,
/// so the client reports it instead of retrying. "ZVBR" + UTF-8 text.
inline constexpr std::uint32_t kRejectMagic = 0x5A564252;  // "ZVBR"
inline constexpr std::size_t kRejectMax = 56;              // bytes a CM reject can carry (IB: 148)

inline std::array<std::byte, kRejectMax> encode_reject(const std::string& why, std::size_t* len) {
  std::array<std::byte, kRejectMax> out{};
  detail::put32(&out[0], kRejectMagic);
  const std::size_t n = std::min(why.size(), kRejectMax - 4);
  std::memcpy(&out[4], why.data(), n);
  *len = 4 + n;
  return out;
}

/// The reason in a zipperd reject's private data, or nullopt for a plain
/// reject (nobody listening, or a non-zipper peer).
inline std::optional<std::string> decode_reject(const void* data, std::size_t len) {
  if (data == nullptr || len < 4) return std::nullopt;
  const auto* b = static_cast<const unsigned char*>(data);
  if (detail::get32(b) != kRejectMagic) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(b + 4), len - 4);
  s.resize(std::strlen(s.c_str()));  // drop the zero padding the CM adds
  return s;
}

}  // namespace zipper::proto::verbs
