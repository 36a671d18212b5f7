// Connects to a zipperd verbs listener with a hello of the caller's choosing
// (possibly one libmmpi would never send) and reports what happened: the
// guest checks use it to see zipperd refuse a malformed hello with a reason.
//   verbs_connect_probe verbs:IP:PORT JOB VRANK NP_LOW NP_HIGH [TIMEOUT_MS] [forge-auth]
// With forge-auth it then answers zipperd's CHALLENGE with a proof made
// without the job secret and prints zipperd's answer (an outsider's
// injection over verbs: must be refused).
// Exit status: 0 connected (prints "connected"), 1 refused or failed (prints
// the error), 2 usage.
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "proto/auth.h"
#include "proto/link.h"

namespace {

// Collects the frames zipperd sends.
class Inbox final : public zipper::proto::RecvSink {
 public:
  std::optional<zipper::proto::Payload> payload_dest(const zipper::proto::FrameHeader& h) override {
    return zipper::proto::Payload::allocate(h.payload_len);
  }
  void on_frame(const zipper::proto::FrameHeader& h, zipper::proto::Payload p) override {
    last = h;
    text.assign(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size());
    got = true;
  }
  zipper::proto::FrameHeader last;
  std::string text;
  bool got = false;
};

// Waits (at most timeout_ms) for the next frame.
bool next_frame(zipper::proto::Link& link, Inbox& in, int timeout_ms) {
  in.got = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!in.got && std::chrono::steady_clock::now() < deadline) {
    const auto st = link.progress_recv(in, 1);
    if (in.got) break;
    if (st == zipper::proto::LinkStatus::kClosed || st == zipper::proto::LinkStatus::kError)
      return false;
    pollfd p{link.poll_fd(), POLLIN, 0};
    poll(&p, 1, 10);
  }
  return in.got;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s verbs:IP:PORT JOB VRANK NP_LOW NP_HIGH [TIMEOUT_MS]\n",
                 argv[0]);
    return 2;
  }
  std::string why;
  const auto ep = zipper::proto::parse_endpoint(argv[1], &why);
  if (!ep) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 2;
  }
  zipper::proto::ConnectHello h;
  h.job_id = std::strtoull(argv[2], nullptr, 10);
  h.vrank = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  // The two-site shorthand: sites {NP_LOW, NP_HIGH}.
  h.site_ranks = {static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10)),
                  static_cast<std::uint32_t>(std::strtoul(argv[5], nullptr, 10))};
  h.site = h.vrank < h.site_ranks[0] ? 0 : 1;
  const int timeout_ms = argc > 6 ? std::atoi(argv[6]) : 5000;
  try {
    auto link = zipper::proto::connect(*ep, timeout_ms, &h);
    std::printf("connected (hello %s)\n",
                link->hello_delivered() ? "in the private data" : "not sent");
    if (argc > 7 && std::strcmp(argv[7], "forge-auth") == 0) {
      namespace auth = zipper::proto::auth;
      Inbox in;
      auth::ChallengePayload ch;
      if (!next_frame(*link, in, timeout_ms) ||
          in.last.type != zipper::proto::FrameType::kChallenge)
        return std::printf("no CHALLENGE from zipperd\n"), 1;
      std::string bytes(in.text);
      auth::decode_challenge(
          std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), &ch);
      const auto guess = auth::random_secret();  // not the job's secret
      auth::AuthPayload a =
          auth::prove(guess, ch, h, link->local_address(), link->remote_address()).auth;
      a.tag[0] ^= std::byte{1};  // and a wrong tag on top
      const auto payload = auth::encode_auth(a);
      zipper::proto::OutFrame f;
      f.hdr.type = zipper::proto::FrameType::kAuth;
      f.hdr.job_id = h.job_id;
      f.hdr.src = h.vrank;
      f.payload = zipper::proto::Payload::allocate(payload.size());
      std::memcpy(f.payload.bytes.data(), payload.data(), payload.size());
      link->post(std::move(f));
      link->progress_send();
      if (next_frame(*link, in, timeout_ms) && in.last.type == zipper::proto::FrameType::kError) {
        std::printf("auth refused: %s\n", in.text.c_str());
        return 1;
      }
      std::printf("forged AUTH was NOT refused (got %s)\n",
                  in.got ? std::string(zipper::proto::to_string(in.last.type)).c_str() : "nothing");
      return 0;
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
}
