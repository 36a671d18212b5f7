// libFuzzer target: the frame header decoder and every payload decoder
// zipperd runs on bytes from an unauthenticated peer. Whatever decodes must
// encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "proto/auth.h"
#include "proto/frame.h"
#include "proto/site_hello.h"

using namespace zipper::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  FrameHeader h;
  for (std::uint32_t max : {0u, 4096u, kMaxPayloadLimit}) {
    if (decode_header(in, max, &h) != DecodeError::kOk) continue;
    if (h.payload_len > max) std::abort();
    std::byte again[kHeaderSize];
    encode_header(h, std::span<std::byte, kHeaderSize>(again));
    if (std::memcmp(again, data, kHeaderSize) != 0) std::abort();
  }
  const auto rest = size > kHeaderSize ? in.subspan(kHeaderSize) : in;
  SiteHello hello;
  if (decode_site_hello(rest, &hello) &&
      rest.size() != site_hello_size(hello.site_ranks.size()) + hello.auth_len)
    std::abort();
  HelloAckPayload ack;
  decode_hello_ack(rest, &ack);
  auth::ChallengePayload ch;
  if (auth::decode_challenge(rest, &ch)) {
    std::byte again[auth::kChallengeSize];
    auth::encode_challenge(ch, std::span<std::byte, auth::kChallengeSize>(again));
    if (std::memcmp(again, rest.data(), auth::kChallengeSize) != 0) std::abort();
  }
  auth::AuthPayload a;
  if (auth::decode_auth(rest, &a)) {
    const auto again = auth::encode_auth(a);
    if (again.size() != rest.size() || std::memcmp(again.data(), rest.data(), rest.size()) != 0)
      std::abort();
  }
  return 0;
}
