// What travels on a verbs link's QP besides frame bytes: the immediate data of
// every SEND and the RDMA CM private data of connection setup.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

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

/// RDMA CM private data both sides exchange (connect request and accept):
/// the receive buffers each side pre-posted. Little-endian, 16 bytes (fits
/// the 56 bytes a RoCE/IB connect request carries).
struct ConnParams {
  static constexpr std::uint32_t kMagic = 0x5A564231;  // "ZVB1"
  std::uint32_t recv_buffers = 0;                      // count
  std::uint32_t buffer_size = 0;                       // bytes each
};
inline constexpr std::size_t kConnParamsSize = 16;

inline std::array<std::byte, kConnParamsSize> encode_params(const ConnParams& p) {
  std::array<std::byte, kConnParamsSize> out{};
  auto put = [&](std::size_t off, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out[off + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
  };
  put(0, ConnParams::kMagic);
  put(4, 1);  // version
  put(8, p.recv_buffers);
  put(12, p.buffer_size);
  return out;
}

/// Nullopt when `data` is not a zipper verbs peer's private data.
inline std::optional<ConnParams> decode_params(const void* data, std::size_t len) {
  if (data == nullptr || len < kConnParamsSize) return std::nullopt;
  const auto* b = static_cast<const unsigned char*>(data);
  auto get = [&](std::size_t off) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(b[off + i]) << (8 * i);
    return v;
  };
  if (get(0) != ConnParams::kMagic || get(4) != 1) return std::nullopt;
  return ConnParams{get(8), get(12)};
}

}  // namespace zipper::proto::verbs
