// systemd's notify protocol (forwarder/service_notify.h, watchdog.h) against
// a datagram socket named in NOTIFY_SOCKET, as systemd would provide.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "forwarder/service_notify.h"
#include "forwarder/watchdog.h"
#include "proto/unique_fd.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;
using namespace std::chrono_literals;

class NotifySocket {
 public:
  NotifySocket() : guard_({"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) {
    char dir[] = "/tmp/zipper-notify-XXXXXX";
    dir_ = ::mkdtemp(dir);
    path_ = dir_ + "/notify";
    fd_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  /// Next datagram, or "" after `timeout`.
  std::string next(std::chrono::milliseconds timeout = 2000ms) {
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return "";
    char buf[4096];
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }

 private:
  zipper::test::EnvGuard guard_;
  std::string dir_, path_;
  zipper::proto::UniqueFd fd_;
};

TEST(ServiceNotify, NoSocketNoMessage) {
  zipper::test::EnvGuard g({"NOTIFY_SOCKET"});
  EXPECT_FALSE(fw::notify::ready("x"));
  EXPECT_EQ(fw::notify::watchdog_interval().count(), 0);
}

TEST(ServiceNotify, ReadyStatusReloadStopping) {
  NotifySocket s;
  EXPECT_TRUE(fw::notify::ready("0 jobs, 0 ranks"));
  EXPECT_EQ(s.next(), "READY=1\nSTATUS=0 jobs, 0 ranks");
  EXPECT_TRUE(fw::notify::status("1 jobs, 2 ranks, 5 frames / 100 bytes relayed"));
  EXPECT_EQ(s.next(), "STATUS=1 jobs, 2 ranks, 5 frames / 100 bytes relayed");
  EXPECT_TRUE(fw::notify::reloading());
  EXPECT_EQ(s.next(), "RELOADING=1");
  EXPECT_TRUE(fw::notify::stopping());
  EXPECT_EQ(s.next(), "STOPPING=1");
}

TEST(ServiceNotify, WatchdogIntervalFromEnvironment) {
  NotifySocket s;
  ::setenv("WATCHDOG_USEC", "3000000", 1);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
  EXPECT_EQ(fw::notify::watchdog_interval(), std::chrono::microseconds(3000000));
  ::setenv("WATCHDOG_PID", "1", 1);  // armed for another process
  EXPECT_EQ(fw::notify::watchdog_interval().count(), 0);
}

TEST(ServiceNotify, WatchdogPingsOnlyWhileLoopsMove) {
  NotifySocket s;
  std::atomic<std::uint64_t> rounds{0};
  std::atomic<bool> stuck{false}, done{false};
  std::thread loop([&] {  // a relay loop's round counter
    while (!done) {
      if (!stuck) ++rounds;
      std::this_thread::sleep_for(5ms);
    }
  });
  {
    fw::Watchdog wd(
        [&] {
          return std::vector<std::uint64_t>{rounds.load(), rounds.load()};
        },
        [] { return std::string("st"); }, std::chrono::microseconds(200000), 10000ms);
    // Status first (due at once), then a ping every 100 ms while the loop moves.
    std::string got;
    for (int i = 0; i < 20 && got != "WATCHDOG=1"; ++i) got = s.next();
    EXPECT_EQ(got, "WATCHDOG=1");
    EXPECT_EQ(s.next(), "WATCHDOG=1");
    stuck = true;
    std::this_thread::sleep_for(150ms);
    while (!s.next(50ms).empty()) {
    }
    EXPECT_EQ(s.next(400ms), "") << "pinged although the loop made no progress";
    EXPECT_GE(wd.missed(), 1u);
    EXPECT_GE(wd.pings(), 2u);
  }
  done = true;
  loop.join();
}

}  // namespace
