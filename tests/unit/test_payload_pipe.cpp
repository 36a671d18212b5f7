// Spliced payloads: the kernel pipe that carries a payload socket -> pipe ->
// socket (proto/payload_pipe.h), zipperd's pool of such pipes
// (forwarder/pipe_pool.h), and the frame assembler's fallback to a copy when
// a pipe runs out of slots (FrameAssembler::unpipe).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "forwarder/pipe_pool.h"
#include "proto/frame_assembler.h"
#include "proto/payload_pipe.h"
#include "test_util.h"

namespace {

using namespace zipper;
using namespace zipper::test;
using proto::PayloadPipe;
using proto::UniqueFd;

// Two connected TCP sockets over 127.0.0.1 (blocking): [0] writes, [1] reads.
std::array<UniqueFd, 2> tcp_pair() {
  UniqueFd l(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(l.get(), 1) != 0 ||
      ::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("loopback listener");
  UniqueFd c(::socket(AF_INET, SOCK_STREAM, 0));
  if (::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("connect");
  UniqueFd s(::accept(l.get(), nullptr, nullptr));
  if (!s) throw std::runtime_error("accept");
  return {std::move(c), std::move(s)};
}

void write_all(int fd, const std::vector<std::byte>& v) {
  std::size_t off = 0;
  while (off < v.size()) {
    const ssize_t w = ::write(fd, v.data() + off, v.size() - off);
    if (w <= 0) throw std::runtime_error("write");
    off += static_cast<std::size_t>(w);
  }
}

std::vector<std::byte> read_exactly(int fd, std::size_t n) {
  std::vector<std::byte> v(n);
  std::size_t off = 0;
  while (off < n) {
    const ssize_t r = ::read(fd, v.data() + off, n - off);
    if (r <= 0) throw std::runtime_error("read");
    off += static_cast<std::size_t>(r);
  }
  return v;
}

// Fills `pipe` from blocking socket `fd` until it holds `n` bytes (the pipe
// itself is non-blocking: EAGAIN means the socket had nothing yet).
void fill_exactly(PayloadPipe& pipe, int fd, std::size_t n) {
  const auto deadline = Clock::now() + kWait;
  while (pipe.held() < n) {
    const long r = pipe.fill_from(fd, n - pipe.held());
    if (r == 0) throw std::runtime_error("end of stream");
    if (r < 0 && errno != EAGAIN && errno != EINTR) throw std::runtime_error("splice in");
    if (Clock::now() > deadline) throw std::runtime_error("fill timed out");
  }
}

TEST(PayloadPipe, SocketToPipeToSocketKeepsEveryByte) {
  auto in = tcp_pair();
  auto out = tcp_pair();
  auto pipe = PayloadPipe::create(1u << 20);
  ASSERT_TRUE(pipe);
  ASSERT_GE(pipe->max_payload(), 256u << 10);
  // Header bytes a read brought along go first, then the spliced rest.
  const auto data = pattern(7, 200000);
  const std::size_t staged = 3000;
  ASSERT_TRUE(pipe->write_bytes(std::span(data).first(staged)));
  std::thread writer(
      [&] { write_all(in[0].get(), std::vector<std::byte>(data.begin() + staged, data.end())); });
  fill_exactly(*pipe, in[1].get(), data.size());
  writer.join();
  EXPECT_EQ(pipe->held(), data.size());
  std::vector<std::byte> got;
  std::thread reader([&] {
    try {
      got = read_exactly(out[1].get(), data.size());
    } catch (const std::exception&) {
    }
  });
  std::size_t sent = 0;
  while (sent < data.size()) {
    const long w = pipe->drain_to(out[0].get(), data.size() - sent, false);
    if (w <= 0) break;
    sent += static_cast<std::size_t>(w);
  }
  if (sent < data.size()) ::shutdown(out[1].get(), SHUT_RDWR);  // let the reader fail
  reader.join();
  ASSERT_EQ(sent, data.size()) << std::strerror(errno);
  EXPECT_EQ(pipe->held(), 0u);
  EXPECT_EQ(pattern_mismatch(7, got), std::string::npos);
}

TEST(PayloadPipe, MaterializeMovesTheBytesIntoTheBuffer) {
  auto in = tcp_pair();
  const auto data = pattern(9, 70000);
  proto::Payload p = proto::Payload::allocate(data.size());
  p.pipe = PayloadPipe::create(1u << 20);
  ASSERT_TRUE(p.pipe);
  write_all(in[0].get(), data);
  fill_exactly(*p.pipe, in[1].get(), data.size());
  ASSERT_TRUE(proto::materialize(p));
  EXPECT_FALSE(p.pipe);
  EXPECT_EQ(pattern_mismatch(9, std::vector<std::byte>(p.bytes.begin(), p.bytes.end())),
            std::string::npos);
  proto::Payload plain = proto::Payload::allocate(10);
  EXPECT_TRUE(proto::materialize(plain));  // nothing to do
}

TEST(PayloadPipe, ReadAllRefusesATooSmallBuffer) {
  auto pipe = PayloadPipe::create(1u << 20);
  ASSERT_TRUE(pipe);
  const auto data = pattern(3, 5000);
  ASSERT_TRUE(pipe->write_bytes(data));
  std::vector<std::byte> small(4000);
  EXPECT_FALSE(pipe->read_all(small));
  EXPECT_EQ(errno, EOVERFLOW);
}

TEST(PipePool, SizesLimitsReuseAndDirtyPipes) {
  forwarder::PipePool pool(2, 1u << 20);
  EXPECT_EQ(pool.acquire(forwarder::PipePool::kMinPayload - 1), nullptr);  // copy is cheaper
  EXPECT_EQ(pool.acquire((256u << 10) + 1), nullptr);                      // may run out of slots
  auto a = pool.acquire(64u << 10);
  auto b = pool.acquire(256u << 10);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(pool.acquire(20000), nullptr);  // both pipes in use
  auto st = pool.stats();
  EXPECT_EQ(st.pipes, 2u);
  EXPECT_EQ(st.in_use, 2u);
  EXPECT_EQ(st.spliced_frames, 2u);
  EXPECT_EQ(st.spliced_bytes, (64u << 10) + (256u << 10));
  EXPECT_EQ(st.no_pipe, 1u);
  // An empty pipe comes back and is reused.
  PayloadPipe* raw = a.get();
  a.reset();
  auto c = pool.acquire(30000);
  EXPECT_EQ(c.get(), raw);
  // A pipe released with bytes in it (a frame dropped half-sent) is closed,
  // so stale bytes never reach the next payload.
  ASSERT_TRUE(b->write_bytes(pattern(1, 100)));
  b.reset();
  st = pool.stats();
  EXPECT_EQ(st.pipes, 1u);
  EXPECT_EQ(st.in_use, 1u);
  auto d = pool.acquire(30000);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->held(), 0u);
  forwarder::PipePool off(0, 1u << 20);
  EXPECT_EQ(off.acquire(64u << 10), nullptr);
}

// The sink hands out piped payloads, as zipperd does for TCP -> TCP frames.
class PipeSink final : public proto::RecvSink {
 public:
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& h) override {
    proto::Payload p = proto::Payload::allocate(h.payload_len);
    p.pipe = PayloadPipe::create(1u << 20);
    return p;
  }
  void on_frame(const proto::FrameHeader&, proto::Payload p) override {
    got.push_back(std::move(p));
  }
  std::vector<proto::Payload> got;
};

TEST(FrameAssemblerPipe, StagedBytesGoToThePipeAndUnpipeFallsBackToACopy) {
  const auto data = pattern(5, 50000);
  proto::FrameHeader h;
  h.type = proto::FrameType::kEager;
  h.payload_len = static_cast<std::uint32_t>(data.size());
  h.msg_len = data.size();
  std::vector<std::byte> wire(proto::kHeaderSize);
  proto::encode_header(h,
                       std::span<std::byte, proto::kHeaderSize>(wire.data(), proto::kHeaderSize));
  wire.insert(wire.end(), data.begin(), data.end());

  // Whole frame fed: the payload lands in the pipe, none in the buffer.
  {
    PipeSink sink;
    proto::FrameAssembler a("test");
    const auto r = a.feed(wire, sink);
    ASSERT_EQ(r.frames, 1u);
    ASSERT_TRUE(sink.got[0].pipe);
    EXPECT_EQ(sink.got[0].pipe->held(), data.size());
    ASSERT_TRUE(proto::materialize(sink.got[0]));
    EXPECT_EQ(pattern_mismatch(
                  5, std::vector<std::byte>(sink.got[0].bytes.begin(), sink.got[0].bytes.end())),
              std::string::npos);
  }
  // Part fed into the pipe, then the pipe is given up: the rest is copied
  // behind the bytes taken out of it.
  {
    PipeSink sink;
    proto::FrameAssembler a("test");
    const std::size_t first = proto::kHeaderSize + 12345;
    a.feed(std::span(wire).first(first), sink);
    ASSERT_NE(a.direct_pipe(), nullptr);
    EXPECT_TRUE(a.direct_span().empty());
    EXPECT_EQ(a.direct_remaining(), data.size() - 12345);
    ASSERT_TRUE(a.unpipe());
    EXPECT_EQ(a.direct_pipe(), nullptr);
    EXPECT_EQ(a.direct_span().size(), data.size() - 12345);
    const auto r = a.feed(std::span(wire).subspan(first), sink);
    ASSERT_EQ(r.frames, 1u);
    EXPECT_FALSE(sink.got[0].pipe);
    EXPECT_EQ(pattern_mismatch(
                  5, std::vector<std::byte>(sink.got[0].bytes.begin(), sink.got[0].bytes.end())),
              std::string::npos);
  }
}

}  // namespace
