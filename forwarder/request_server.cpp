#include "request_server.h"

#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace zipper::forwarder {

namespace {
std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }
std::string fmt_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}
}  // namespace

RequestServer::RequestServer(UniqueFd listener, std::string terminator, Handler handler,
                             std::chrono::milliseconds timeout)
    : listener_(std::move(listener)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      terminator_(std::move(terminator)),
      handler_(std::move(handler)),
      timeout_(timeout) {
  if (!stop_) throw std::runtime_error(errno_text("eventfd"));
  thread_ = std::thread([this] { run(); });
}

RequestServer::~RequestServer() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(stop_.get(), &one, sizeof one);
  thread_.join();
}

void RequestServer::run() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("{}", errno_text("request server poll"));
      return;
    }
    if (fds[1].revents) return;
    UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c) continue;
    serve(c.get());
  }
}

void RequestServer::serve(int fd) {
  std::string req;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  char buf[4096];
  while (req.find(terminator_) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF ends the request too
    req.append(buf, static_cast<std::size_t>(n));
    if (req.size() > 65536) return;  // no request of ours is this long
  }
  const auto end = req.find(terminator_);
  if (end != std::string::npos) req.resize(end);
  const std::string answer = handler_(req);
  std::size_t off = 0;
  while (off < answer.size()) {
    const ssize_t n = ::send(fd, answer.data() + off, answer.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

void check_socket_directory(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw std::runtime_error(errno_text("control socket directory " + dir));
  if (!S_ISDIR(st.st_mode))
    throw std::runtime_error("control socket directory " + dir + " is not a directory");
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    throw std::runtime_error(
        "control socket directory " + dir + " must be owned by zipperd's user (uid " +
        std::to_string(::geteuid()) + ", is " + std::to_string(st.st_uid) +
        ") and writable by no one else (mode " + fmt_mode(st.st_mode) +
        "): use a directory of its own such as the unit's RuntimeDirectory /run/zipper");
}

UniqueFd listen_unix(const std::string& path, unsigned mode) {
  check_socket_directory(path);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("control socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    throw std::runtime_error("control socket " + path + " is served by a running zipperd");
  // Stale: nobody answers. Only a socket of ours is removed: in a shared
  // directory, another user's file (or a symlink) is left alone.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid())
      throw std::runtime_error("control socket path " + path +
                               " exists and is not a socket of this user: not removing it");
    ::unlink(path.c_str());
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error(errno_text("control socket"));
  // The mode applies from creation on: no window where others may connect.
  const mode_t old = ::umask(0777 & ~mode);
  const int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (rc != 0) throw std::runtime_error(errno_text("cannot bind control socket " + path));
  if (::listen(fd.get(), 16) != 0) throw std::runtime_error(errno_text("listen " + path));
  return fd;
}

UniqueFd listen_tcp(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::runtime_error("expected HOST:PORT, got '" + host_port + "'");
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port = host_port.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("cannot resolve " + host_port + ": " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, ::freeaddrinfo);
  UniqueFd fd(::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error(errno_text("socket"));
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), res->ai_addr, res->ai_addrlen) != 0)
    throw std::runtime_error(errno_text("cannot bind " + host_port));
  if (::listen(fd.get(), 128) != 0) throw std::runtime_error(errno_text("listen " + host_port));
  return fd;
}

std::string bound_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return ss.ss_family == AF_INET6 ? "[" + std::string(host) + "]:" + port
                                  : std::string(host) + ":" + port;
}

}  // namespace zipper::forwarder
