// A small blocking request/answer server on its own thread, for the control
// socket (Unix, mode 0660, one JSON line each way). One request per
// connection, served in turn: a low-rate administrative interface for the
// service's own group, and a client that stalls is cut off after `timeout`.
// (/metrics, reachable by more people, is served by libmicrohttpd:
// metrics_http.h.)
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "../proto/unique_fd.h"

namespace zipper::forwarder {

using proto::UniqueFd;

class RequestServer {
 public:
  /// Gets the bytes read up to the first `terminator` (excluded) and returns
  /// the answer to write before closing.
  using Handler = std::function<std::string(const std::string& request)>;

  /// Serves on an already listening socket.
  RequestServer(UniqueFd listener, std::string terminator, Handler handler,
                std::chrono::milliseconds timeout = std::chrono::seconds(2));
  ~RequestServer();
  RequestServer(const RequestServer&) = delete;
  RequestServer& operator=(const RequestServer&) = delete;

 private:
  void run();
  void serve(int fd);

  UniqueFd listener_, stop_;
  std::string terminator_;
  Handler handler_;
  std::chrono::milliseconds timeout_;
  std::thread thread_;
};

/// Listening Unix stream socket at `path` with permissions `mode`. Removes a
/// stale socket left by a dead zipperd; throws std::runtime_error if a live
/// one answers there or the socket cannot be made.
UniqueFd listen_unix(const std::string& path, unsigned mode);
/// Checks that the control socket's directory belongs to this process: owned
/// by its euid, and writable by no one else (the unit's RuntimeDirectory). In
/// a directory others may write, anyone could plant a socket or a link under
/// the name admins' zipperctl talks to. Throws std::runtime_error naming the
/// path and what is wrong.
void check_socket_directory(const std::string& path);
/// Listening TCP socket on "HOST:PORT" (numeric IPv4/IPv6 or a name; port 0
/// picks one). Throws std::runtime_error naming the address.
UniqueFd listen_tcp(const std::string& host_port);
/// "HOST:PORT" a listening TCP socket is bound to.
std::string bound_address(int fd);

}  // namespace zipper::forwarder
