// Frame codec: header layout, round trips, every decode error, hello payloads
// and a deterministic fuzz loop.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "proto/frame.h"

namespace {

using namespace zipper::proto;
using Bytes = std::array<std::byte, kHeaderSize>;

Bytes encode(const FrameHeader& h) {
  Bytes b{};
  encode_header(h, b);
  return b;
}

DecodeError decode(const Bytes& b, FrameHeader* out, std::uint32_t max_payload = kMaxPayloadLimit) {
  return decode_header(std::span<const std::byte>(b), max_payload, out);
}

std::uint64_t read_le(const Bytes& b, std::size_t off, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(b[off + i]) << (8 * i);
  return v;
}

void write_le(Bytes& b, std::size_t off, std::size_t n, std::uint64_t v) {
  for (std::size_t i = 0; i < n; ++i) b[off + i] = std::byte((v >> (8 * i)) & 0xff);
}

// Field offsets in the 64-byte header.
constexpr std::size_t kOffMagic = 0, kOffVersion = 4, kOffType = 6, kOffFlags = 7, kOffJob = 8,
                      kOffSrc = 16, kOffDst = 20, kOffTag = 24, kOffContext = 28, kOffSeq = 32,
                      kOffPayloadLen = 40, kOffCredits = 44, kOffMsgLen = 48, kOffChunkOffset = 56;

void expect_same(const FrameHeader& a, const FrameHeader& b) {
  EXPECT_EQ(a.magic, b.magic);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.context_id, b.context_id);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.payload_len, b.payload_len);
  EXPECT_EQ(a.credits, b.credits);
  EXPECT_EQ(a.msg_len, b.msg_len);
  EXPECT_EQ(a.chunk_offset, b.chunk_offset);
}

// A CHUNK header with every field distinct and non-zero in every byte lane.
FrameHeader sample_chunk() {
  FrameHeader h;
  h.type = FrameType::kChunk;
  h.flags = 0xA5;
  h.job_id = 0x0102030405060708ull;
  h.src = 0x11121314;
  h.dst = 0x21222324;
  h.tag = -123456789;
  h.context_id = 0x31323334;
  h.seq = 0xF1F2F3F4F5F6F7F8ull;
  h.payload_len = 4096;
  h.credits = 0x41424344;
  h.msg_len = 0x0000000100000000ull;
  h.chunk_offset = 0x00000000FFFF0000ull;
  return h;
}

FrameHeader valid_of_type(FrameType t) {
  FrameHeader h;
  h.type = t;
  switch (t) {
    case FrameType::kHello:
      h.payload_len = kHelloMinPayload;
      break;
    case FrameType::kHelloAck:
      h.payload_len = kHelloAckSize;
      break;
    case FrameType::kEager:
      h.payload_len = 100;
      h.msg_len = 100;
      break;
    case FrameType::kChunk:
      h.payload_len = 100;
      h.msg_len = 1000;
      h.chunk_offset = 900;
      break;
    case FrameType::kRts:
      h.msg_len = 1 << 20;
      break;
    case FrameType::kError:
      h.payload_len = 17;
      break;
    default:
      break;
  }
  return h;
}

TEST(FrameCodec, HeaderSizeAndConstants) {
  EXPECT_EQ(kHeaderSize, 64u);
  EXPECT_EQ(kMaxFrameType, static_cast<std::uint8_t>(FrameType::kAbort));
  EXPECT_EQ(credit_cost(0), 1u);  // one buffer per frame, whatever its size
  EXPECT_EQ(credit_cost(1000), 1u);
}

TEST(FrameCodec, RoundTripEveryField) {
  const FrameHeader h = sample_chunk();
  const Bytes b = encode(h);
  FrameHeader d;
  ASSERT_EQ(decode(b, &d), DecodeError::kOk);
  expect_same(h, d);
}

TEST(FrameCodec, RoundTripExtremeValues) {
  FrameHeader h;
  h.type = FrameType::kChunk;
  h.flags = 0xFF;
  h.job_id = std::numeric_limits<std::uint64_t>::max();
  h.src = std::numeric_limits<std::uint32_t>::max();
  h.dst = std::numeric_limits<std::uint32_t>::max();
  h.tag = std::numeric_limits<std::int32_t>::min();
  h.context_id = std::numeric_limits<std::uint32_t>::max();
  h.seq = std::numeric_limits<std::uint64_t>::max();
  h.payload_len = kMaxPayloadLimit;
  h.credits = std::numeric_limits<std::uint32_t>::max();
  h.msg_len = std::numeric_limits<std::uint64_t>::max();
  h.chunk_offset = std::numeric_limits<std::uint64_t>::max() - kMaxPayloadLimit;
  FrameHeader d;
  ASSERT_EQ(decode(encode(h), &d), DecodeError::kOk);
  expect_same(h, d);

  h.tag = std::numeric_limits<std::int32_t>::max();
  ASSERT_EQ(decode(encode(h), &d), DecodeError::kOk);
  EXPECT_EQ(d.tag, std::numeric_limits<std::int32_t>::max());
  h.tag = -1;
  ASSERT_EQ(decode(encode(h), &d), DecodeError::kOk);
  EXPECT_EQ(d.tag, -1);
}

TEST(FrameCodec, RoundTripEveryType) {
  for (std::uint8_t t = 1; t <= kMaxFrameType; ++t) {
    SCOPED_TRACE(static_cast<int>(t));
    FrameHeader h = valid_of_type(static_cast<FrameType>(t));
    h.job_id = 77;
    h.seq = t;
    FrameHeader d;
    const Bytes b = encode(h);
    ASSERT_EQ(decode(b, &d), DecodeError::kOk);
    expect_same(h, d);
    EXPECT_EQ(encode(d), b);
  }
}

TEST(FrameCodec, LittleEndianLayout) {
  const FrameHeader h = sample_chunk();
  const Bytes b = encode(h);
  // "ZIPP" magic 0x5A495050 little-endian: 50 50 49 5A.
  EXPECT_EQ(b[0], std::byte{0x50});
  EXPECT_EQ(b[1], std::byte{0x50});
  EXPECT_EQ(b[2], std::byte{0x49});
  EXPECT_EQ(b[3], std::byte{0x5A});
  EXPECT_EQ(read_le(b, kOffMagic, 4), kMagic);
  EXPECT_EQ(read_le(b, kOffVersion, 2), kVersion);
  EXPECT_EQ(b[4], std::byte{2});
  EXPECT_EQ(b[5], std::byte{0});
  EXPECT_EQ(b[kOffType], std::byte{7});
  EXPECT_EQ(b[kOffFlags], std::byte{0xA5});
  // job id 0x0102030405060708: least significant byte first.
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(b[kOffJob + i], std::byte(8 - i)) << i;
  EXPECT_EQ(read_le(b, kOffSrc, 4), h.src);
  EXPECT_EQ(b[kOffSrc], std::byte{0x14});
  EXPECT_EQ(read_le(b, kOffDst, 4), h.dst);
  EXPECT_EQ(read_le(b, kOffTag, 4), static_cast<std::uint32_t>(h.tag));
  EXPECT_EQ(read_le(b, kOffContext, 4), h.context_id);
  EXPECT_EQ(read_le(b, kOffSeq, 8), h.seq);
  EXPECT_EQ(b[kOffSeq], std::byte{0xF8});
  EXPECT_EQ(b[kOffSeq + 7], std::byte{0xF1});
  EXPECT_EQ(read_le(b, kOffPayloadLen, 4), 4096u);
  EXPECT_EQ(b[kOffPayloadLen], std::byte{0x00});
  EXPECT_EQ(b[kOffPayloadLen + 1], std::byte{0x10});
  EXPECT_EQ(read_le(b, kOffCredits, 4), h.credits);
  EXPECT_EQ(read_le(b, kOffMsgLen, 8), h.msg_len);
  EXPECT_EQ(b[kOffMsgLen + 4], std::byte{0x01});
  EXPECT_EQ(read_le(b, kOffChunkOffset, 8), h.chunk_offset);
}

TEST(FrameCodec, EveryByteBelongsToAField) {
  // No reserved bytes: changing any byte of a valid header changes the decode
  // result (either an error or a different field value).
  const FrameHeader h = sample_chunk();
  const Bytes b = encode(h);
  for (std::size_t i = 0; i < kHeaderSize; ++i) {
    Bytes m = b;
    m[i] ^= std::byte{0x01};
    FrameHeader d;
    if (decode(m, &d) == DecodeError::kOk) {
      EXPECT_NE(encode(d), b) << "byte " << i;
    }
  }
}

TEST(FrameCodec, TruncatedAtEveryLength) {
  const Bytes b = encode(sample_chunk());
  for (std::size_t n = 0; n < kHeaderSize; ++n) {
    // Exactly n bytes of storage, so a read past the end would be visible to sanitizers.
    std::vector<std::byte> part(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    FrameHeader d;
    EXPECT_EQ(decode_header(std::span<const std::byte>(part.data(), n), kMaxPayloadLimit, &d),
              DecodeError::kTruncated)
        << n;
  }
  // Extra bytes after the header (the payload) are fine.
  std::vector<std::byte> longer(b.begin(), b.end());
  longer.resize(200, std::byte{0xEE});
  FrameHeader d;
  EXPECT_EQ(decode_header(longer, kMaxPayloadLimit, &d), DecodeError::kOk);
  expect_same(d, sample_chunk());
}

TEST(FrameCodec, BadMagic) {
  Bytes b = encode(sample_chunk());
  FrameHeader d;
  for (std::size_t i = 0; i < 4; ++i) {
    Bytes m = b;
    m[i] ^= std::byte{0x80};
    EXPECT_EQ(decode(m, &d), DecodeError::kBadMagic) << i;
  }
  write_le(b, kOffMagic, 4, 0x5050495A);  // big-endian "ZIPP"
  EXPECT_EQ(decode(b, &d), DecodeError::kBadMagic);
  Bytes zeros{};
  EXPECT_EQ(decode(zeros, &d), DecodeError::kBadMagic);
}

// Another version is refused, and the decoder keeps the peer's version so
// that the refusal can name both (protocol 1: the np_low/np_high HELLO).
TEST(FrameCodec, BadVersion) {
  static_assert(kVersion == 2);
  FrameHeader d;
  for (std::uint64_t v : {0ull, 1ull, 3ull, 0x100ull, 0xFFFFull}) {
    Bytes b = encode(sample_chunk());
    write_le(b, kOffVersion, 2, v);
    d = FrameHeader{};
    EXPECT_EQ(decode(b, &d), DecodeError::kBadVersion) << v;
    EXPECT_EQ(d.version, v);
    EXPECT_EQ(d.magic, kMagic);
  }
}

TEST(FrameCodec, BadType) {
  FrameHeader d;
  Bytes b = encode(valid_of_type(FrameType::kCredit));
  b[kOffType] = std::byte{0};
  EXPECT_EQ(decode(b, &d), DecodeError::kBadType);
  for (unsigned t = kMaxFrameType + 1u; t <= 255; ++t) {
    b[kOffType] = std::byte(t);
    EXPECT_EQ(decode(b, &d), DecodeError::kBadType) << t;
  }
}

TEST(FrameCodec, ErrorPrecedence) {
  // Checks run in wire order: magic, version, type, size, lengths.
  FrameHeader d;
  Bytes b = encode(sample_chunk());
  write_le(b, kOffMagic, 4, 0);
  write_le(b, kOffVersion, 2, 9);
  b[kOffType] = std::byte{0};
  EXPECT_EQ(decode(b, &d), DecodeError::kBadMagic);
  write_le(b, kOffMagic, 4, kMagic);
  EXPECT_EQ(decode(b, &d), DecodeError::kBadVersion);
  write_le(b, kOffVersion, 2, kVersion);
  EXPECT_EQ(decode(b, &d), DecodeError::kBadType);
  b[kOffType] = std::byte(static_cast<std::uint8_t>(FrameType::kEager));
  write_le(b, kOffPayloadLen, 4, 5000);  // oversize for max 4096 and inconsistent with msg_len
  EXPECT_EQ(decode(b, &d, 4096), DecodeError::kOversize);
  EXPECT_EQ(decode(b, &d, 8192), DecodeError::kBadLength);
}

TEST(FrameCodec, Oversize) {
  FrameHeader h;
  h.type = FrameType::kEager;
  h.payload_len = 4096;
  h.msg_len = 4096;
  FrameHeader d;
  EXPECT_EQ(decode(encode(h), &d, 4096), DecodeError::kOk);
  EXPECT_EQ(decode(encode(h), &d, 4095), DecodeError::kOversize);
  EXPECT_EQ(decode(encode(h), &d, 0), DecodeError::kOversize);
  // The hard limit applies whatever the configured maximum.
  h.payload_len = kMaxPayloadLimit;
  h.msg_len = kMaxPayloadLimit;
  EXPECT_EQ(decode(encode(h), &d, std::numeric_limits<std::uint32_t>::max()), DecodeError::kOk);
  h.payload_len = kMaxPayloadLimit + 1;
  h.msg_len = h.payload_len;
  EXPECT_EQ(decode(encode(h), &d, std::numeric_limits<std::uint32_t>::max()),
            DecodeError::kOversize);
  h.payload_len = std::numeric_limits<std::uint32_t>::max();
  h.msg_len = h.payload_len;
  EXPECT_EQ(decode(encode(h), &d, std::numeric_limits<std::uint32_t>::max()),
            DecodeError::kOversize);
  // A zero maximum still admits payload-less frames.
  EXPECT_EQ(decode(encode(valid_of_type(FrameType::kBye)), &d, 0), DecodeError::kOk);
}

TEST(FrameCodec, BadLengthEager) {
  FrameHeader d;
  FrameHeader h = valid_of_type(FrameType::kEager);
  h.msg_len = h.payload_len + 1;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  h.msg_len = h.payload_len - 1;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  h = valid_of_type(FrameType::kEager);
  h.chunk_offset = 1;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  // An empty eager message is legal.
  h = valid_of_type(FrameType::kEager);
  h.payload_len = 0;
  h.msg_len = 0;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk);
}

TEST(FrameCodec, BadLengthChunk) {
  FrameHeader d;
  FrameHeader h;
  h.type = FrameType::kChunk;
  h.msg_len = 1000;
  h.payload_len = 100;
  for (std::uint64_t off : {0ull, 500ull, 900ull}) {
    h.chunk_offset = off;
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk) << off;
  }
  h.chunk_offset = 901;  // ends one byte past the message
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  h.chunk_offset = 1000;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  h.chunk_offset = 1001;  // starts past the message
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  // offset + payload would wrap around 2^64: must not pass.
  h.chunk_offset = std::numeric_limits<std::uint64_t>::max() - 10;
  h.msg_len = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  h.chunk_offset = std::numeric_limits<std::uint64_t>::max() - 100;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk);
  // Empty chunks are meaningless.
  h.chunk_offset = 0;
  h.msg_len = 1000;
  h.payload_len = 0;
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
}

TEST(FrameCodec, BadLengthPayloadlessTypes) {
  FrameHeader d;
  for (FrameType t : {FrameType::kRts, FrameType::kCts, FrameType::kCredit, FrameType::kJobReady,
                      FrameType::kBye, FrameType::kPing, FrameType::kAbort}) {
    SCOPED_TRACE(std::string(to_string(t)));
    FrameHeader h = valid_of_type(t);
    h.msg_len = 12345;  // RTS/CTS carry a length but no payload
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk);
    h.payload_len = 1;
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength);
  }
}

TEST(FrameCodec, BadLengthHelloAndAck) {
  FrameHeader d;
  FrameHeader h = valid_of_type(FrameType::kHello);
  // Shorter than a site hello's fixed fields (site_hello.h decodes the rest).
  for (std::uint32_t n = 0; n < kHelloMinPayload; ++n) {
    h.payload_len = n;
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength) << n;
  }
  h.payload_len = kHelloMinPayload + 4 * 3 + 100;  // three sites and an auth proof
  EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk);

  h = valid_of_type(FrameType::kHelloAck);
  for (std::uint32_t n : {0u, 7u, 9u, 64u}) {
    h.payload_len = n;
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kBadLength) << n;
  }
  // ERROR frames take any payload (text), including none.
  h = valid_of_type(FrameType::kError);
  for (std::uint32_t n : {0u, 1u, 1024u}) {
    h.payload_len = n;
    EXPECT_EQ(decode(encode(h), &d), DecodeError::kOk) << n;
  }
}

TEST(FrameCodec, ToStringCoversEveryValue) {
  std::set<std::string> seen;
  for (std::uint8_t t = 1; t <= kMaxFrameType; ++t) {
    const std::string s(to_string(static_cast<FrameType>(t)));
    EXPECT_NE(s, "?");
    EXPECT_TRUE(seen.insert(s).second) << s;
  }
  EXPECT_EQ(to_string(static_cast<FrameType>(0)), "?");
  seen.clear();
  for (std::uint8_t e = 0; e <= static_cast<std::uint8_t>(DecodeError::kBadLength); ++e) {
    const std::string s(to_string(static_cast<DecodeError>(e)));
    EXPECT_NE(s, "?");
    EXPECT_TRUE(seen.insert(s).second) << s;
  }
  seen.clear();
  for (std::uint8_t c = 1; c <= static_cast<std::uint8_t>(ErrorCode::kDraining); ++c) {
    const std::string s(to_string(static_cast<ErrorCode>(c)));
    EXPECT_NE(s, "unknown error");
    EXPECT_TRUE(seen.insert(s).second) << s;
  }
  EXPECT_EQ(to_string(static_cast<ErrorCode>(200)), "unknown error");
}

TEST(FrameCodec, HelloAckRoundTripAndRejects) {
  std::array<std::byte, kHelloAckSize> b{};
  HelloAckPayload a{0x00800000, 0x00100000, {}};
  for (std::size_t i = 0; i < a.confirm.size(); ++i) a.confirm[i] = std::byte(i + 1);
  encode_hello_ack(a, b);
  EXPECT_EQ(b[2], std::byte{0x80});
  EXPECT_EQ(b[6], std::byte{0x10});
  EXPECT_EQ(b[8], std::byte{1});
  EXPECT_EQ(b[39], std::byte{32});
  HelloAckPayload d;
  ASSERT_TRUE(decode_hello_ack(b, &d));
  EXPECT_EQ(d.credits, 8u << 20);
  EXPECT_EQ(d.max_payload, 1u << 20);
  EXPECT_EQ(d.confirm, a.confirm);
  EXPECT_FALSE(decode_hello_ack(std::span<const std::byte>(b.data(), 7), &d));
  EXPECT_FALSE(decode_hello_ack(std::span<const std::byte>(b.data(), 0), &d));
  std::vector<std::byte> longer(b.begin(), b.end());
  longer.push_back(std::byte{0});
  EXPECT_FALSE(decode_hello_ack(longer, &d));
}

// Decoding arbitrary bytes never crashes; whatever decodes as kOk is a
// faithful, canonical reading: every one of the 64 bytes belongs to a field,
// so re-encoding gives back the identical bytes.
void check_fuzz_case(const Bytes& b, std::uint32_t max_payload, std::size_t* ok_count) {
  FrameHeader d;
  const DecodeError e = decode(b, &d, max_payload);
  ASSERT_LE(static_cast<int>(e), static_cast<int>(DecodeError::kBadLength));
  if (e != DecodeError::kOk) return;
  ++*ok_count;
  ASSERT_EQ(encode(d), b);
  ASSERT_LE(d.payload_len, max_payload);
  ASSERT_GE(static_cast<int>(d.type), 1);
  ASSERT_LE(static_cast<int>(d.type), kMaxFrameType);
  if (d.type == FrameType::kChunk) {
    ASSERT_GT(d.payload_len, 0u);
    ASSERT_LE(d.chunk_offset, d.msg_len);
    ASSERT_LE(d.payload_len, d.msg_len - d.chunk_offset);
  }
  if (d.type == FrameType::kEager) {
    ASSERT_EQ(d.msg_len, d.payload_len);
  }
}

TEST(FrameCodec, FuzzRandomBuffers) {
  std::mt19937 rng(0x5A1990u);
  std::uniform_int_distribution<int> byte(0, 255);
  std::size_t ok = 0;
  for (int i = 0; i < 100000; ++i) {
    Bytes b;
    for (auto& x : b) x = std::byte(static_cast<std::uint8_t>(byte(rng)));
    // Mostly random; give a share of them the right magic/version/type so the
    // later checks get exercised too.
    if (i % 4 != 0) write_le(b, kOffMagic, 4, kMagic);
    if (i % 4 >= 2) write_le(b, kOffVersion, 2, kVersion);
    if (i % 4 == 3) b[kOffType] = std::byte(static_cast<std::uint8_t>(1 + i % kMaxFrameType));
    const std::uint32_t max_payload = (i % 2) ? kMaxPayloadLimit : 0xFFFFFFFFu;
    ASSERT_NO_FATAL_FAILURE(check_fuzz_case(b, max_payload, &ok)) << "iteration " << i;
  }
  EXPECT_GT(ok, 0u);  // the seed produces some decodable headers
}

TEST(FrameCodec, FuzzMutatedValidHeaders) {
  std::mt19937 rng(20240613);
  std::size_t ok = 0;
  for (int i = 0; i < 100000; ++i) {
    FrameHeader h = valid_of_type(static_cast<FrameType>(1 + i % kMaxFrameType));
    h.job_id = rng();
    h.src = static_cast<std::uint32_t>(rng());
    h.dst = static_cast<std::uint32_t>(rng());
    h.tag = static_cast<std::int32_t>(rng());
    h.seq = (std::uint64_t(rng()) << 32) | rng();
    Bytes b = encode(h);
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      const std::size_t pos = rng() % kHeaderSize;
      switch (rng() % 3) {
        case 0:
          b[pos] ^= std::byte(static_cast<std::uint8_t>(1u << (rng() % 8)));
          break;
        case 1:
          b[pos] = std::byte(static_cast<std::uint8_t>(rng()));
          break;
        default:
          b[pos] = (rng() % 2) ? std::byte{0} : std::byte{0xFF};
          break;
      }
    }
    ASSERT_NO_FATAL_FAILURE(check_fuzz_case(b, 1u << 20, &ok)) << "iteration " << i;
    // Any prefix is truncated, whatever its contents.
    FrameHeader d;
    const std::size_t n = rng() % kHeaderSize;
    ASSERT_EQ(decode_header(std::span<const std::byte>(b.data(), n), 1u << 20, &d),
              DecodeError::kTruncated);
  }
  EXPECT_GT(ok, 1000u);
}

}  // namespace
