// /metrics over HTTP, served by libmicrohttpd: a small thread pool, a
// per-connection timeout and a connection cap (total and per client address),
// so idle or slow clients cannot hold a scrape back.
// GET or HEAD /metrics gets 200 with the Prometheus text; other paths 404,
// other methods 405.
#pragma once

#include <functional>
#include <string>

#include "../proto/unique_fd.h"

struct MHD_Daemon;

namespace zipper::forwarder {

class MetricsServer {
 public:
  struct Limits {
    unsigned threads = 2;           // worker threads, each polling its connections
    unsigned timeout_s = 5;         // an idle or slow connection is closed after this
    unsigned max_connections = 64;  // connections at once
    unsigned max_per_address = 32;  // of those, from one client address
  };
  /// Serves on `listener` (a listening TCP socket; taken over). `body` makes
  /// the metrics text, on a worker thread. Throws std::runtime_error when
  /// libmicrohttpd cannot start.
  MetricsServer(proto::UniqueFd listener, std::function<std::string()> body, Limits limits);
  explicit MetricsServer(proto::UniqueFd listener, std::function<std::string()> body)
      : MetricsServer(std::move(listener), std::move(body), Limits{}) {}
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// Status code and body for a request (the routing, apart from HTTP).
  static std::pair<unsigned, std::string> route(const std::string& method, const std::string& url,
                                                const std::function<std::string()>& body);

 private:
  std::function<std::string()> body_;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace zipper::forwarder
