// libFuzzer target: the TCP link's stream parser (TcpLink::progress_recv),
// fed the input through a socketpair in chunks whose sizes the input picks,
// with a sink that sometimes refuses a payload buffer (the paused path).
// Byte 0: bit 0 picks the pre-hello payload limit (4 KiB) or 1 MiB; bits 1-7
// seed the chunking. The rest is the stream.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "proto/tcp/tcp_link.h"

using namespace zipper::proto;

namespace {

class Sink final : public RecvSink {
 public:
  std::optional<Payload> payload_dest(const FrameHeader& hdr) override {
    if (++asks_ % 3 == 0) return std::nullopt;  // pause now and then
    return Payload::allocate(hdr.payload_len);
  }
  void on_frame(const FrameHeader& hdr, Payload payload) override {
    if (payload.bytes.size() != hdr.payload_len) std::abort();
    ++frames_;
  }
  std::size_t frames_ = 0;

 private:
  std::size_t asks_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > (1u << 16)) return 0;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  const std::uint8_t ctl = data[0];
  tcp::TcpLink link(UniqueFd(sv[0]), "fuzz");  // owns sv[0]
  link.set_max_payload((ctl & 1) ? 4096 : (1u << 20));
  Sink sink;
  std::size_t off = 1;
  std::uint32_t rng = ctl | 0x100u;
  bool done = false;
  int idle = 0;
  while (!done && idle < 1000) {
    if (off < size) {
      rng = rng * 1103515245u + 12345u;
      const std::size_t chunk = std::min<std::size_t>(size - off, 1 + (rng >> 16) % 300);
      const ssize_t w = ::write(sv[1], data + off, chunk);
      if (w > 0) off += static_cast<std::size_t>(w);
      if (off == size) ::shutdown(sv[1], SHUT_WR);
    } else if (off == size && size == 1) {
      ::shutdown(sv[1], SHUT_WR);  // an empty stream
      ++off;
    }
    switch (link.progress_recv(sink, 0)) {
      case LinkStatus::kClosed:
      case LinkStatus::kError:
        done = true;
        break;
      case LinkStatus::kPaused:
      case LinkStatus::kOk:
        ++idle;  // bounded: every input ends in close or error once written
        break;
    }
  }
  if (!done && off >= size) std::abort();  // a fully written, closed stream must end
  ::close(sv[1]);
  return 0;
}
