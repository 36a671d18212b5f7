// Endpoint parsing and backend selection by address scheme.
#include <netdb.h>

#include <charconv>
#include <cstring>
#include <stdexcept>

#include "link.h"
#include "resolve.h"
#include "tcp/tcp_link.h"
#ifdef ZIPPER_HAVE_VERBS
#include "verbs/verbs_listener.h"
#endif

namespace zipper::proto {

std::optional<Endpoint> parse_endpoint(const std::string& text, std::string* why) {
  Endpoint ep;
  std::string rest = text;
  for (const char* scheme : {"tcp", "verbs"}) {
    const std::string prefix = std::string(scheme) + ":";
    if (rest.rfind(prefix, 0) == 0) {
      ep.scheme = scheme;
      rest = rest.substr(prefix.size());
      break;
    }
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    *why = "expected [tcp:|verbs:]HOST:PORT, got '" + text + "'";
    return std::nullopt;
  }
  ep.host = rest.substr(0, colon);
  unsigned port = 0;
  const auto* b = rest.data() + colon + 1;
  const auto* e = rest.data() + rest.size();
  const auto [p, ec] = std::from_chars(b, e, port);
  if (ec != std::errc() || p != e || port > 65535) {
    *why = "bad port in '" + text + "'";
    return std::nullopt;
  }
  ep.port = static_cast<std::uint16_t>(port);
  return ep;
}

#ifndef ZIPPER_HAVE_VERBS
namespace {
[[noreturn]] void no_verbs(const Endpoint& ep) {
  throw std::runtime_error(
      "link scheme 'verbs' (" + ep.to_string() +
      ") is not available in this build (built without libibverbs/"
      "librdmacm: install libibverbs-dev librdmacm-dev and rebuild); use tcp:");
}
}  // namespace
#endif

// Never falls back from verbs to TCP: a verbs address without an RDMA device
// is an error that names the missing device.
std::unique_ptr<Listener> listen(const Endpoint& ep, const verbs::Config& verbs_cfg) {
  if (ep.scheme == "verbs") {
#ifdef ZIPPER_HAVE_VERBS
    return std::make_unique<verbs::VerbsListener>(ep, verbs_cfg);
#else
    (void)verbs_cfg;
    no_verbs(ep);
#endif
  }
  return std::make_unique<tcp::TcpListener>(ep);
}

std::unique_ptr<Link> connect(const Endpoint& ep, int timeout_ms, const ConnectHello* hello,
                              const verbs::Config& verbs_cfg) {
  if (ep.scheme == "verbs") {
#ifdef ZIPPER_HAVE_VERBS
    return verbs::verbs_connect(ep, timeout_ms, hello, verbs_cfg);
#else
    (void)hello;
    (void)verbs_cfg;
    no_verbs(ep);
#endif
  }
  return tcp::tcp_connect(ep, timeout_ms);
}

sockaddr_in resolve_ipv4(const Endpoint& ep) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(ep.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    throw std::runtime_error("cannot resolve '" + ep.host + "': " + gai_strerror(rc));
  sockaddr_in a{};
  std::memcpy(&a, res->ai_addr, sizeof a);
  freeaddrinfo(res);
  a.sin_port = htons(ep.port);
  return a;
}

}  // namespace zipper::proto
