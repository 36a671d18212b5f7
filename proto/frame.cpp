#include "frame.h"

#include <cstring>

#include "site_hello.h"

namespace zipper::proto {

static_assert(kVersion == kSiteHelloVersion, "HELLO's payload is the SiteHello of this version");
static_assert(kHelloMinPayload == site_hello_size(0));

namespace {

// Little-endian writer/reader over a fixed byte span; explicit shifts keep the
// format independent of host byte order.
class Writer {
 public:
  explicit Writer(std::byte* p) : p_(p) {}
  template <typename T>
  void put(T v) {
    auto u = static_cast<std::uint64_t>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) p_[pos_++] = std::byte((u >> (8 * i)) & 0xff);
  }
  std::size_t pos() const { return pos_; }

 private:
  std::byte* p_;
  std::size_t pos_ = 0;
};

class Reader {
 public:
  explicit Reader(const std::byte* p) : p_(p) {}
  template <typename T>
  T get() {
    std::uint64_t u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) u |= std::uint64_t(p_[pos_++]) << (8 * i);
    return static_cast<T>(u);
  }

 private:
  const std::byte* p_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string_view to_string(DecodeError e) {
  switch (e) {
    case DecodeError::kOk:
      return "ok";
    case DecodeError::kTruncated:
      return "truncated header";
    case DecodeError::kBadMagic:
      return "bad magic";
    case DecodeError::kBadVersion:
      return "unsupported protocol version";
    case DecodeError::kBadType:
      return "unknown frame type";
    case DecodeError::kOversize:
      return "payload larger than the negotiated maximum";
    case DecodeError::kBadLength:
      return "inconsistent length fields";
  }
  return "?";
}

std::string_view to_string(FrameType t) {
  switch (t) {
    case FrameType::kHello:
      return "HELLO";
    case FrameType::kHelloAck:
      return "HELLO_ACK";
    case FrameType::kJobReady:
      return "JOB_READY";
    case FrameType::kEager:
      return "EAGER";
    case FrameType::kRts:
      return "RTS";
    case FrameType::kCts:
      return "CTS";
    case FrameType::kChunk:
      return "CHUNK";
    case FrameType::kCredit:
      return "CREDIT";
    case FrameType::kError:
      return "ERROR";
    case FrameType::kBye:
      return "BYE";
    case FrameType::kChallenge:
      return "CHALLENGE";
    case FrameType::kAuth:
      return "AUTH";
    case FrameType::kPing:
      return "PING";
    case FrameType::kAbort:
      return "ABORT";
  }
  return "?";
}

std::string_view to_string(ErrorCode c) {
  switch (c) {
    case ErrorCode::kMalformed:
      return "malformed frame";
    case ErrorCode::kUnknownJob:
      return "unknown job";
    case ErrorCode::kBadHello:
      return "bad hello";
    case ErrorCode::kPeerGone:
      return "peer gone";
    case ErrorCode::kCreditOverrun:
      return "credit overrun";
    case ErrorCode::kAuth:
      return "authentication failed";
    case ErrorCode::kDraining:
      return "draining";
  }
  return "unknown error";
}

void encode_header(const FrameHeader& h, std::span<std::byte, kHeaderSize> out) {
  Writer w(out.data());
  w.put(h.magic);
  w.put(h.version);
  w.put(static_cast<std::uint8_t>(h.type));
  w.put(h.flags);
  w.put(h.job_id);
  w.put(h.src);
  w.put(h.dst);
  w.put(static_cast<std::uint32_t>(h.tag));
  w.put(h.context_id);
  w.put(h.seq);
  w.put(h.payload_len);
  w.put(h.credits);
  w.put(h.msg_len);
  w.put(h.chunk_offset);
  static_assert(4 + 2 + 1 + 1 + 8 + 4 + 4 + 4 + 4 + 8 + 4 + 4 + 8 + 8 == kHeaderSize);
}

DecodeError decode_header(std::span<const std::byte> in, std::uint32_t max_payload,
                          FrameHeader* out) {
  if (in.size() < kHeaderSize) return DecodeError::kTruncated;
  Reader r(in.data());
  FrameHeader h;
  h.magic = r.get<std::uint32_t>();
  if (h.magic != kMagic) return DecodeError::kBadMagic;
  h.version = r.get<std::uint16_t>();
  if (h.version != kVersion) {
    out->magic = h.magic;
    out->version = h.version;
    return DecodeError::kBadVersion;
  }
  const auto type = r.get<std::uint8_t>();
  if (type == 0 || type > kMaxFrameType) return DecodeError::kBadType;
  h.type = static_cast<FrameType>(type);
  h.flags = r.get<std::uint8_t>();
  h.job_id = r.get<std::uint64_t>();
  h.src = r.get<std::uint32_t>();
  h.dst = r.get<std::uint32_t>();
  h.tag = static_cast<std::int32_t>(r.get<std::uint32_t>());
  h.context_id = r.get<std::uint32_t>();
  h.seq = r.get<std::uint64_t>();
  h.payload_len = r.get<std::uint32_t>();
  h.credits = r.get<std::uint32_t>();
  h.msg_len = r.get<std::uint64_t>();
  h.chunk_offset = r.get<std::uint64_t>();
  if (h.payload_len > max_payload || h.payload_len > kMaxPayloadLimit)
    return DecodeError::kOversize;
  switch (h.type) {
    case FrameType::kEager:
      if (h.msg_len != h.payload_len || h.chunk_offset != 0) return DecodeError::kBadLength;
      break;
    case FrameType::kChunk:
      if (h.payload_len == 0 || h.chunk_offset > h.msg_len ||
          h.msg_len - h.chunk_offset < h.payload_len)
        return DecodeError::kBadLength;
      break;
    case FrameType::kRts:
    case FrameType::kCts:
    case FrameType::kCredit:
    case FrameType::kJobReady:
    case FrameType::kBye:
    case FrameType::kPing:
    case FrameType::kAbort:
      if (h.payload_len != 0) return DecodeError::kBadLength;
      break;
    case FrameType::kHello:
      if (h.payload_len < kHelloMinPayload) return DecodeError::kBadLength;
      break;
    case FrameType::kHelloAck:
      if (h.payload_len != kHelloAckSize) return DecodeError::kBadLength;
      break;
    case FrameType::kError:
    case FrameType::kChallenge:
    case FrameType::kAuth:
      break;  // payload checked by its decoder (proto/auth.h)
  }
  *out = h;
  return DecodeError::kOk;
}

void encode_hello_ack(const HelloAckPayload& p, std::span<std::byte, kHelloAckSize> out) {
  Writer w(out.data());
  w.put(p.credits);
  w.put(p.max_payload);
  std::memcpy(out.data() + w.pos(), p.confirm.data(), p.confirm.size());
}

bool decode_hello_ack(std::span<const std::byte> in, HelloAckPayload* out) {
  if (in.size() != kHelloAckSize) return false;
  Reader r(in.data());
  out->credits = r.get<std::uint32_t>();
  out->max_payload = r.get<std::uint32_t>();
  std::memcpy(out->confirm.data(), in.data() + 8, out->confirm.size());
  return true;
}

}  // namespace zipper::proto
