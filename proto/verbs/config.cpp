#include "config.h"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "credits.h"

namespace zipper::proto::verbs {
namespace {
template <typename T>
void read_uint(const char* name, T* out, std::uint64_t lo, std::uint64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return;
  std::uint64_t x = 0;
  const std::string_view s(v);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || p != s.data() + s.size() || x < lo || x > hi)
    throw std::invalid_argument(std::string(name) + "='" + v + "': expected an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  *out = static_cast<T>(x);
}
}  // namespace

Config Config::from_env() {
  Config c;
  read_uint("ZIPPER_VERBS_RECV_BUFFERS", &c.recv_buffers, kMinBuffers, 4096);
  read_uint("ZIPPER_VERBS_BUFFER_SIZE", &c.buffer_size, 4096, 16u << 20);
  read_uint("ZIPPER_VERBS_SEND_SLOTS", &c.send_slots, 2, 4096);
  read_uint("ZIPPER_VERBS_INLINE", &c.inline_max, 0, 1024);
  read_uint("ZIPPER_VERBS_ZCOPY_MIN", &c.zcopy_min, 0, std::uint64_t{1} << 32);
  read_uint("ZIPPER_VERBS_WRITE_MIN", &c.write_min, 0, std::uint64_t{1} << 32);
  read_uint("ZIPPER_VERBS_ACK_TIMEOUT", &c.ack_timeout, 1, 31);
  read_uint("ZIPPER_VERBS_KEEPALIVE_MS", &c.keepalive_ms, 0, 3600000);
  read_uint("ZIPPER_VERBS_SPIN_US", &c.spin_us, 0, 1000000);
  read_uint("ZIPPER_VERBS_SRQ_THRESHOLD", &c.srq_threshold, 0, 1u << 20);
  read_uint("ZIPPER_VERBS_SRQ_CREDITS", &c.srq_credits, kMinBuffers, 4096);
  read_uint("ZIPPER_VERBS_SRQ_MAX_WR", &c.srq_max_wr, kMinBuffers, 1u << 24);
  read_uint("ZIPPER_VERBS_RESOLVE_MS", &c.resolve_timeout_ms, 10, 600000);
  if (const char* p = std::getenv("ZIPPER_VERBS_POLL"); p != nullptr && *p != '\0') {
    const std::string_view s(p);
    if (s == "busy")
      c.busy_poll = true;
    else if (s != "adaptive")
      throw std::invalid_argument(std::string("ZIPPER_VERBS_POLL='") + p +
                                  "': expected 'adaptive' or 'busy'");
  }
  if (const char* s = std::getenv("ZIPPER_VERBS_SOURCE"); s != nullptr) c.source = s;
  return c;
}

}  // namespace zipper::proto::verbs
