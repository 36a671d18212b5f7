// zipperd: the zipper forwarder daemon.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "forwarder.h"

namespace {

// "A=10.201.0.254:7470" -> {name, endpoint}
zipper::forwarder::Config::ListenSpec parse_listen(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw CLI::ValidationError("--listen", "expected NAME=[tcp:]HOST:PORT, got '" + text + "'");
  std::string why;
  auto ep = zipper::proto::parse_endpoint(text.substr(eq + 1), &why);
  if (!ep) throw CLI::ValidationError("--listen", why);
  return {text.substr(0, eq), *ep};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipperd: relays MMPI traffic between two cluster subnets"};
  std::vector<std::string> listen;
  std::uint64_t conn_credits = 64, max_memory = 256u << 20, max_frame = 1u << 20;
  std::string log_level = "info", pid_file, pools;
  int hello_timeout_s = 10;
  app.add_option("--listen", listen,
                 "NAME=[tcp:]HOST:PORT, once per subnet (e.g. A=10.201.0.254:7470)")
      ->required();
  app.add_option("--conn-credits", conn_credits,
                 "frames (pool buffers) one connection may have inside zipperd")
      ->check(CLI::Range(2u, zipper::forwarder::kMaxConnCredits))
      ->capture_default_str();
  app.add_option("--max-memory", max_memory, "bytes of all payload buffer pools together")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  app.add_option("--pools", pools,
                 "payload buffer pools, SIZE:COUNT per size class, e.g. "
                 "1KiB:2048,16KiB:960,64KiB:1480,1MiB:152 (default: split --max-memory)");
  app.add_option("--max-frame", max_frame, "largest frame payload accepted (bytes)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  app.add_option("--hello-timeout", hello_timeout_s, "seconds a new connection has to say hello")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_option("--pid-file", pid_file, "write the pid here once every listener is bound");
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [zipperd] [%l] %v");

  zipper::forwarder::Config cfg;
  try {
    for (const auto& l : listen) cfg.listen.push_back(parse_listen(l));
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  if (!pools.empty()) {
    std::string why;
    auto classes = zipper::forwarder::parse_pool_classes(pools, &why);
    if (!classes) {
      spdlog::error("--pools: {}", why);
      return 2;
    }
    cfg.pools = *classes;
  }
  cfg.conn_credits = static_cast<std::uint32_t>(conn_credits);
  cfg.max_memory = max_memory;
  cfg.max_frame = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_frame, 0xffffffffu));
  cfg.hello_timeout_ms = hello_timeout_s * 1000;

  // Signals are taken synchronously by sigwait below, so block them in every thread.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    zipper::forwarder::Forwarder fwd(cfg);
    fwd.start();
    if (!pid_file.empty()) {
      std::ofstream(pid_file) << getpid() << "\n";
    }
    int sig = 0;
    sigwait(&sigs, &sig);
    spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    fwd.stop();
    if (!pid_file.empty()) std::remove(pid_file.c_str());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
