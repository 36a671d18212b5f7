#include "config.h"

#include <arpa/inet.h>

#include <charconv>
#include <functional>
#include <stdexcept>

#include "credits.h"

namespace zipper::proto::verbs {
namespace {

struct Row {
  SettingInfo info;
  std::function<std::string(Config&, std::string_view)> set;
  std::function<std::string(const Config&)> get;
};

// A whole number in [lo, hi] into the field `m`.
template <typename T>
Row uint_row(const char* key, const char* env, const char* type, const char* help, T Config::*m,
             std::uint64_t lo, std::uint64_t hi) {
  const Config defaults;
  SettingInfo info{key,
                   env,
                   type,
                   std::to_string(defaults.*m),
                   "an integer from " + std::to_string(lo) + " to " + std::to_string(hi),
                   true,
                   false,
                   help};
  return {std::move(info),
          [=](Config& c, std::string_view s) -> std::string {
            std::uint64_t x = 0;
            const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
            if (ec != std::errc() || p != s.data() + s.size() || x < lo || x > hi)
              return "expected an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + std::string(s) + "'";
            c.*m = static_cast<T>(x);
            return "";
          },
          [=](const Config& c) { return std::to_string(c.*m); }};
}

const std::vector<Row>& rows() {
  static const std::vector<Row> t = [] {
    std::vector<Row> r = {
        uint_row("recv_buffers", "ZIPPER_VERBS_RECV_BUFFERS", "count",
                 "receive buffers pre-posted per link (= credits the peer gets)",
                 &Config::recv_buffers, kMinBuffers, 4096),
        uint_row("buffer_size", "ZIPPER_VERBS_BUFFER_SIZE", "bytes",
                 "bytes per receive buffer = largest SEND", &Config::buffer_size, 4096, 16u << 20),
        uint_row("send_slots", "ZIPPER_VERBS_SEND_SLOTS", "count",
                 "registered send staging buffers per link (at most the peer's credits)",
                 &Config::send_slots, 2, 4096),
        uint_row("inline", "ZIPPER_VERBS_INLINE", "bytes",
                 "SENDs up to this many bytes go IBV_SEND_INLINE (capped by the device)",
                 &Config::inline_max, 0, 1024),
        uint_row("zcopy_min", "ZIPPER_VERBS_ZCOPY_MIN", "bytes",
                 "payload bytes from which owned payloads of chunked SENDs are sent from an "
                 "MR-cache registration (0: never)",
                 &Config::zcopy_min, 0, std::uint64_t{1} << 32),
        uint_row("write_min", "ZIPPER_VERBS_WRITE_MIN", "bytes",
                 "payload bytes from which a frame's payload goes by RDMA WRITE with immediate "
                 "(0: never, chunked SENDs only)",
                 &Config::write_min, 0, std::uint64_t{1} << 32),
        uint_row("ack_timeout", "ZIPPER_VERBS_ACK_TIMEOUT", "exponent",
                 "QP local ACK timeout exponent, 4.096 us x 2^N per try", &Config::ack_timeout, 1,
                 31),
        uint_row("keepalive_ms", "ZIPPER_VERBS_KEEPALIVE_MS", "ms",
                 "an idle receiving link probes its peer this often (0: never)",
                 &Config::keepalive_ms, 0, 3600000),
        uint_row("spin_us", "ZIPPER_VERBS_SPIN_US", "us",
                 "an idle receive keeps polling the CQs this long before the caller sleeps",
                 &Config::spin_us, 0, 1000000),
        uint_row("srq_threshold", "ZIPPER_VERBS_SRQ_THRESHOLD", "count",
                 "links per device beyond which new links share the device's SRQ (0: every link)",
                 &Config::srq_threshold, 0, 1u << 20),
        uint_row("srq_credits", "ZIPPER_VERBS_SRQ_CREDITS", "count",
                 "credits an SRQ link grants its peer; the SRQ grows by as many buffers",
                 &Config::srq_credits, kMinBuffers, 4096),
        uint_row("srq_max_wr", "ZIPPER_VERBS_SRQ_MAX_WR", "count",
                 "receives one SRQ holds at most (capped by the device's max_srq_wr)",
                 &Config::srq_max_wr, kMinBuffers, 1u << 24),
        uint_row("resolve_ms", "ZIPPER_VERBS_RESOLVE_MS", "ms",
                 "ms for each address / route resolution attempt of a connect",
                 &Config::resolve_timeout_ms, 10, 600000),
    };
    r.back().info.connect_only = true;
    r.push_back({{"poll", "ZIPPER_VERBS_POLL", "text", "adaptive", "adaptive or busy", false, true,
                  "busy: connected links never let the caller sleep"},
                 [](Config& c, std::string_view s) -> std::string {
                   if (s != "busy" && s != "adaptive")
                     return "expected 'adaptive' or 'busy', got '" + std::string(s) + "'";
                   c.busy_poll = s == "busy";
                   return "";
                 },
                 [](const Config& c) { return std::string(c.busy_poll ? "busy" : "adaptive"); }});
    r.push_back({{"source", "ZIPPER_VERBS_SOURCE", "IPv4", "",
                  "an IPv4 address of this host (unset: the one on the destination's subnet)",
                  false, true, "source IPv4 address for RDMA CM connects"},
                 [](Config& c, std::string_view s) -> std::string {
                   in_addr a{};
                   const std::string text(s);
                   if (!text.empty() && inet_pton(AF_INET, text.c_str(), &a) != 1)
                     return "expected an IPv4 address, got '" + text + "'";
                   c.source = text;
                   return "";
                 },
                 [](const Config& c) { return c.source; }});
    return r;
  }();
  return t;
}

const Row* find(std::string_view key) {
  for (const auto& r : rows())
    if (r.info.key == key) return &r;
  return nullptr;
}

}  // namespace

const std::vector<SettingInfo>& settings() {
  static const std::vector<SettingInfo> out = [] {
    std::vector<SettingInfo> v;
    for (const auto& r : rows()) v.push_back(r.info);
    return v;
  }();
  return out;
}

std::string set(Config* c, std::string_view key, std::string_view text) {
  const Row* r = find(key);
  if (r == nullptr) return "no verbs setting '" + std::string(key) + "'";
  return r->set(*c, text);
}

std::string value_of(const Config& c, std::string_view key) {
  const Row* r = find(key);
  if (r == nullptr) throw std::invalid_argument("no verbs setting '" + std::string(key) + "'");
  return r->get(c);
}

}  // namespace zipper::proto::verbs
