#include "control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zipper::ctl {

namespace {
// Closes the socket on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

nlohmann::json request(const std::string& path, const nlohmann::json& req,
                       std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw ControlError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throw ControlError(std::string("socket: ") + std::strerror(errno));
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw ControlError("cannot connect to zipperd at " + path + ": " + std::strerror(errno) +
                       (errno == EACCES ? " (are you in the service's group?)" : "") +
                       (errno == ENOENT || errno == ECONNREFUSED ? " (is zipperd running?)" : ""));
  const std::string line = req.dump() + "\n";
  if (::send(s.fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    throw ControlError("cannot send to " + path + ": " + std::strerror(errno));
  ::shutdown(s.fd, SHUT_WR);
  std::string answer;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{s.fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0)
      throw ControlError("no answer from zipperd at " + path + " within " +
                         std::to_string(timeout.count()) + " ms");
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ControlError("reading from " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(answer);
  } catch (const nlohmann::json::exception& e) {
    throw ControlError("zipperd at " + path + " sent no valid answer: " + e.what());
  }
  if (!out.value("ok", false))
    throw ControlError("zipperd: " + out.value("error", "request failed"));
  return out;
}

}  // namespace zipper::ctl
