#include "zipperd_probe.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "../../proto/unique_fd.h"

namespace zipper::loadgen {

std::optional<ProcSample> read_proc(pid_t pid) {
  ProcSample s;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  if (!status) return std::nullopt;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kib = std::strtoull(line.c_str() + 6, nullptr, 10);
    if (line.rfind("VmHWM:", 0) == 0) s.hwm_kib = std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  std::ifstream stat(dir + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), {});
  const auto paren = all.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(all.substr(paren + 2));
  std::string field;
  std::uint64_t ut = 0, st = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) ut = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) st = std::strtoull(field.c_str(), nullptr, 10);
  }
  s.cpu_s = static_cast<double>(ut + st) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  // Clock ticks (10 ms) are too coarse for a short run: each thread's
  // schedstat has its run time in ns. Its threads live as long as zipperd.
  double ns = 0;
  bool any = false;
  if (DIR* d = ::opendir((dir + "/task").c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(dir + "/task/" + e->d_name + "/schedstat");
      double run = 0;
      if (f >> run) {
        ns += run;
        any = true;
      }
    }
    ::closedir(d);
  }
  if (any) s.cpu_s = ns / 1e9;
  return s;
}

MetricsText::MetricsText(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    std::size_t value_at;
    if (const auto brace = line.find('{'); brace != std::string::npos) {
      const auto close = line.rfind('}');
      if (close == std::string::npos || close < brace) continue;
      s.name = line.substr(0, brace);
      s.labels = line.substr(brace + 1, close - brace - 1);
      value_at = close + 1;
    } else {
      const auto space = line.find(' ');
      if (space == std::string::npos) continue;
      s.name = line.substr(0, space);
      value_at = space;
    }
    char* end = nullptr;
    const std::string v = line.substr(value_at);
    s.value = std::strtod(v.c_str(), &end);
    if (end == v.c_str()) continue;
    samples_.push_back(std::move(s));
  }
}

double MetricsText::sum(const std::string& name) const {
  double t = 0;
  for (const auto& s : samples_)
    if (s.name == name) t += s.value;
  return t;
}

std::vector<MetricsText::Sample> MetricsText::of(const std::string& name) const {
  std::vector<Sample> out;
  for (const auto& s : samples_)
    if (s.name == name) out.push_back(s);
  return out;
}

std::optional<MetricsText> scrape_metrics(const std::string& host_port, int timeout_ms,
                                          std::string* why) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) {
    *why = "metrics address '" + host_port + "' is not HOST:PORT";
    return std::nullopt;
  }
  const std::string host = host_port.substr(0, colon), port = host_port.substr(colon + 1);
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *why = "metrics address " + host_port + ": " + gai_strerror(rc);
    return std::nullopt;
  }
  proto::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  const int rc = fd ? ::connect(fd.get(), res->ai_addr, res->ai_addrlen) : -1;
  const int err = errno;
  freeaddrinfo(res);
  if (!fd || (rc != 0 && err != EINPROGRESS)) {
    *why = "cannot connect to " + host_port + ": " + std::strerror(err);
    return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto wait = [&](short events) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    pollfd p{fd.get(), events, 0};
    return left > 0 && ::poll(&p, 1, static_cast<int>(left)) == 1;
  };
  const std::string req = "GET /metrics HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
  std::size_t off = 0;
  while (off < req.size()) {
    if (!wait(POLLOUT)) {
      *why = "timed out sending to " + host_port;
      return std::nullopt;
    }
    const ssize_t n = ::send(fd.get(), req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      *why = "cannot send to " + host_port + ": " + std::strerror(errno);
      return std::nullopt;
    }
    off += static_cast<std::size_t>(n);
  }
  std::string answer;
  char buf[65536];
  for (;;) {
    if (!wait(POLLIN)) {
      *why = "timed out reading /metrics from " + host_port;
      return std::nullopt;
    }
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) {
      *why = "cannot read from " + host_port + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  const auto body = answer.find("\r\n\r\n");
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.find(" 200 ") > answer.find("\r\n") ||
      body == std::string::npos) {
    *why = "GET /metrics at " + host_port + " answered: " + answer.substr(0, answer.find('\r'));
    return std::nullopt;
  }
  return MetricsText(answer.substr(body + 4));
}

}  // namespace zipper::loadgen
