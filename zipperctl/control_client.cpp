#include "control_client.h"

#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
// Who may own zipperd's control socket: root, the caller, or the service
// account the package creates (deploy/service/zipper.sysusers).
bool trusted_owner(uid_t uid) {
  if (uid == 0 || uid == ::geteuid()) return true;
  const passwd* pw = ::getpwnam("zipper");
  return pw != nullptr && pw->pw_uid == uid;
}

std::string uid_text(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return "uid " + std::to_string(uid) + (pw ? " (" + std::string(pw->pw_name) + ")" : "");
}
}  // namespace

void check_socket_owner(const std::string& path, int fd) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    throw ControlError("cannot connect to zipperd at " + path + ": " + std::strerror(errno) +
                       (errno == ENOENT ? " (is zipperd running?)" : ""));
  if (!S_ISSOCK(st.st_mode))
    throw ControlError("refusing " + path + ": not a socket (a file or link planted there?)");
  if (!trusted_owner(st.st_uid))
    throw ControlError("refusing the control socket " + path + ": it belongs to " +
                       uid_text(st.st_uid) +
                       ", not root, you or the zipper service user (planted by another user?)");
  if (fd < 0) return;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    throw ControlError("cannot read the credentials of " + path + ": " + std::strerror(errno));
  if (!trusted_owner(cred.uid))
    throw ControlError("refusing the control socket " + path + ": the process serving it runs as " +
                       uid_text(cred.uid) + ", not root, you or the zipper service user");
}

nlohmann::json request(const std::string& path, const nlohmann::json& req,
                       std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw ControlError("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  check_socket_owner(path, -1);  // before sending anything
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throw ControlError(std::string("socket: ") + std::strerror(errno));
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw ControlError("cannot connect to zipperd at " + path + ": " + std::strerror(errno) +
                       (errno == EACCES ? " (are you in the service's group?)" : "") +
                       (errno == ENOENT || errno == ECONNREFUSED ? " (is zipperd running?)" : ""));
  check_socket_owner(path, s.fd);  // and the process that answered
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
