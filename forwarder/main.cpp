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
  zipper::forwarder::Config defaults;
  std::string auth = defaults.auth;
  std::vector<std::string> munge_socket;
  std::uint32_t max_ranks = defaults.max_ranks, max_jobs = defaults.max_jobs,
                max_connections = defaults.max_connections;
  double ready_timeout_s = defaults.ready_timeout_ms / 1000.0,
         frame_timeout_s = defaults.frame_timeout_ms / 1000.0,
         accept_pause_s = defaults.accept_pause_ms / 1000.0;
  int keepalive_s = defaults.keepalive_s;
  bool any_side = false;
  app.add_option("--auth", auth,
                 "admission: 'secret' (proof of the job secret) or 'munge' (also a MUNGE "
                 "credential; a job is kept to one uid)")
      ->check(CLI::IsMember({"secret", "munge"}))
      ->capture_default_str();
  app.add_option("--munge-socket", munge_socket,
                 "munged socket per listener, in --listen order (clusters with different keys)");
  app.add_option("--max-ranks", max_ranks, "largest layout x+y a job may claim")
      ->capture_default_str();
  app.add_option("--max-jobs", max_jobs, "jobs served at once")->capture_default_str();
  app.add_option("--max-connections", max_connections, "client connections at once")
      ->capture_default_str();
  app.add_option("--ready-timeout", ready_timeout_s,
                 "seconds an admitted rank waits for the rest of its job before it is closed")
      ->capture_default_str();
  app.add_option("--frame-timeout", frame_timeout_s,
                 "seconds a frame's payload may take to arrive after its header")
      ->capture_default_str();
  app.add_option("--keepalive", keepalive_s, "TCP keepalive idle seconds on client links (0: off)")
      ->capture_default_str();
  app.add_option("--accept-pause", accept_pause_s,
                 "seconds accepting pauses when zipperd runs out of file descriptors")
      ->capture_default_str();
  app.add_flag("--any-side", any_side,
               "admit a rank on any listener (default: with two listeners, the low group must "
               "use the first and the high group the second)");
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
  cfg.auth = auth;
  cfg.munge_socket = munge_socket;
  cfg.max_ranks = max_ranks;
  cfg.max_jobs = max_jobs;
  cfg.max_connections = max_connections;
  cfg.ready_timeout_ms = static_cast<int>(ready_timeout_s * 1000);
  cfg.frame_timeout_ms = static_cast<int>(frame_timeout_s * 1000);
  cfg.accept_pause_ms = static_cast<int>(accept_pause_s * 1000);
  cfg.keepalive_s = keepalive_s;
  cfg.group_sides = !any_side;

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
