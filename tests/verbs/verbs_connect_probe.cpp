// Connects to a zipperd verbs listener with a hello of the caller's choosing
// (possibly one libmmpi would never send) and reports what happened: the
// guest checks use it to see zipperd refuse a malformed hello with a reason.
//   verbs_connect_probe verbs:IP:PORT JOB VRANK NP_LOW NP_HIGH [TIMEOUT_MS]
// Exit status: 0 connected (prints "connected"), 1 refused or failed (prints
// the error), 2 usage.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "proto/link.h"

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
  h.np_low = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
  h.np_high = static_cast<std::uint32_t>(std::strtoul(argv[5], nullptr, 10));
  const int timeout_ms = argc > 6 ? std::atoi(argv[6]) : 5000;
  try {
    auto link = zipper::proto::connect(*ep, timeout_ms, &h);
    std::printf("connected (hello %s)\n",
                link->hello_delivered() ? "in the private data" : "not sent");
    return 0;
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
}
