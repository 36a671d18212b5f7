// zipperd: the zipper forwarder daemon. Settings come from the command line
// over an optional TOML file (daemon_config.h); under systemd it speaks the
// notify protocol (READY, STATUS, RELOADING, STOPPING, WATCHDOG).
#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "../proto/host_key.h"
#include "control_commands.h"
#include "daemon_config.h"
#include "forwarder.h"
#include "metrics_http.h"
#include "pid_file.h"
#include "prometheus_text.h"
#include "request_server.h"
#include "service_notify.h"
#include "watchdog.h"

namespace {

namespace fw = zipper::forwarder;

std::string status_line(const fw::Forwarder& fwd) {
  const fw::Snapshot s = fwd.snapshot();
  return fmt::format("{}{} jobs, {} ranks, {} frames / {} bytes relayed",
                     s.draining ? "draining: " : "", s.jobs_active, s.ranks_connected,
                     s.relayed.frames, s.relayed.bytes);
}

// SIGHUP: re-reads the file (with the same command line over it), applies
// what may change at run time and names what waits for a restart.
void reload(const std::string& file, const fw::CommandLine& cli, fw::DaemonConfig& running,
            const std::function<void(const std::string&)>& set_log_level) {
  if (file.empty()) {
    spdlog::info("SIGHUP: no --config file, nothing to re-read");
    return;
  }
  fw::DaemonConfig fresh;
  try {
    fresh = fw::load(file, cli);
  } catch (const fw::ConfigError& e) {
    spdlog::error("SIGHUP: {}; keeping the running settings", e.what());
    return;
  }
  const fw::ConfigDiff d = fw::diff(running, fresh);
  for (const auto& key : d.applicable)
    if (key == "log.level") set_log_level(fresh.log_level);
  // What a reload did must reach the log even when the new level is above info.
  const auto level = std::max(spdlog::level::info, spdlog::get_level());
  for (const auto& key : d.applicable)
    spdlog::log(level, "SIGHUP: applied {} = {}", key, fw::value_of(fresh, key));
  for (const auto& key : d.needs_restart)
    spdlog::warn("SIGHUP: {} changed to '{}' but needs a restart (running: '{}')", key,
                 fw::value_of(fresh, key), fw::value_of(running, key));
  if (d.applicable.empty() && d.needs_restart.empty())
    spdlog::log(level, "SIGHUP: {} re-read, no setting changed", file);
}

// --print-host-key: the public half of the host key file (created when
// absent, e.g. at install), as clients pin it.
int print_public_key(const std::string& config_file, const fw::CommandLine& cli) {
  std::string path;
  if (auto it = cli.find("--host-key"); it != cli.end() && !it->second.empty()) {
    path = it->second.back();
  } else if (!config_file.empty()) {
    try {
      path = fw::load(config_file, cli).host_key;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "zipperd: %s\n", e.what());
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "zipperd: --print-host-key needs --host-key PATH (or service.host_key)\n");
    return 2;
  }
  bool created = false;
  std::string why;
  auto key = zipper::proto::auth::HostKey::load_or_create(path, &created, &why);
  if (!key) {
    std::fprintf(stderr, "zipperd: %s\n", why.c_str());
    return 2;
  }
  if (created) std::fprintf(stderr, "zipperd: created host key %s\n", path.c_str());
  std::printf("%s\n", zipper::proto::auth::to_hex(key->public_key()).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "zipperd: relays MMPI traffic between cluster subnets (sites), one listener (leg) each"};
  std::string config_file;
  bool check_only = false;
  bool print_host_key = false;
  fw::CommandLine cli;
  app.add_option("--config", config_file,
                 "TOML settings file, e.g. /etc/zipper/zipperd.toml; flags override its keys")
      ->type_name("PATH")
      ->check(CLI::ExistingFile);
  app.add_flag("--check-config", check_only, "validate the settings, print them and exit");
  app.add_flag("--print-host-key", print_host_key,
               "print the public half of --host-key (creating the key when absent) and exit");
  app.set_version_flag("--version", std::string("zipperd ") + fw::build_info().version);
  fw::add_options(app, cli);
  app.footer(
      "Shares: per pool class a job holds at most max(1, buffers / jobs) and never the class's\n"
      "reserve (1/8); at most --conn-credits frames wait for one rank (its senders pause);\n"
      "a layout, and all of one tenant's ranks, at most --max-job-connections-share of\n"
      "--max-connections; a tenant (MUNGE uid, else address prefix) at most\n"
      "--max-jobs-per-user (MUNGE) or --max-jobs-per-prefix jobs, and the last 1/8 of\n"
      "--max-jobs is kept for tenants holding none. Idle complete jobs are kept.\n"
      "Signals: SIGHUP re-reads --config and applies log.level (other changes need a restart);\n"
      "SIGTERM/SIGINT stop. zipperctl talks to the control socket. See docs/operations.md\n"
      "and docs/security.md.\n"
      "Exit status: 0 stopped cleanly (or --check-config passed), 1 failure while running\n"
      "(a listener cannot bind, ...), 2 usage or settings error.");
  // Exit codes: 0 success (also --help, --version), 2 usage or settings
  // error, 1 failure at run time (docs/operations.md).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (print_host_key) return print_public_key(config_file, cli);

  fw::DaemonConfig cfg;
  try {
    cfg = fw::load(config_file, cli);
    if (check_only) {
      fw::Forwarder check(cfg.forwarder);  // the cross-field checks
      for (const auto& s : fw::settings())
        std::printf("%s = %s\n", s.key.c_str(), fw::value_of(cfg, s.key).c_str());
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipperd: %s\n", e.what());
    return 2;
  }
  // The host key before anything listens: a key file others could read or
  // replace is refused, and zipperd does not start.
  bool created = false;
  if (!cfg.host_key.empty()) {
    std::string why;
    auto key = zipper::proto::auth::HostKey::load_or_create(cfg.host_key, &created, &why);
    if (!key) {
      std::fprintf(stderr, "zipperd: %s\n", why.c_str());
      return 2;
    }
    cfg.forwarder.host_key = std::move(key);
  }

  spdlog::set_level(spdlog::level::from_str(cfg.log_level));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [zipperd] [%l] %v");

  // Signals are taken synchronously by sigwait below, so block them in every thread.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::mutex level_mu;
  const auto set_log_level = [&](const std::string& level) {
    std::lock_guard lk(level_mu);
    spdlog::set_level(spdlog::level::from_str(level));
    cfg.log_level = level;
  };

  try {
    fw::Forwarder fwd(cfg.forwarder);
    const std::string host_pub = zipper::proto::auth::to_hex(fwd.host_public_key());
    if (cfg.host_key.empty())
      spdlog::warn(
          "host key {} made for this run only (no --host-key): clients can pin it only "
          "from this log",
          host_pub);
    else
      spdlog::info("host key {} ({}{})", host_pub, cfg.host_key, created ? ", created now" : "");
    fwd.start();
    fw::ControlCommands commands(fwd, set_log_level);
    std::unique_ptr<fw::RequestServer> control;
    std::unique_ptr<fw::MetricsServer> metrics;
    if (!cfg.control_socket.empty()) {
      // 0660: the service user and its group (the admins) may connect.
      control = std::make_unique<fw::RequestServer>(
          fw::listen_unix(cfg.control_socket, 0660), "\n",
          [&](const std::string& req) { return commands.handle(req); });
      spdlog::info("control socket at {}", cfg.control_socket);
    }
    if (!cfg.metrics_listen.empty()) {
      auto fd = fw::listen_tcp(cfg.metrics_listen);
      spdlog::info("metrics at http://{}/metrics", fw::bound_address(fd.get()));
      fw::MetricsOptions opt;
      opt.per_job_series = cfg.metrics_job_series != "none";
      metrics = std::make_unique<fw::MetricsServer>(std::move(fd), [&fwd, opt] {
        return fw::prometheus_text(fwd.snapshot(), fw::build_info(), opt);
      });
    }
    std::unique_ptr<fw::PidFile> pid_file;
    if (!cfg.pid_file.empty()) pid_file = std::make_unique<fw::PidFile>(cfg.pid_file);
    fw::notify::ready(status_line(fwd));
    const auto wd_interval = fw::notify::watchdog_interval();
    if (wd_interval.count() > 0)
      spdlog::info("systemd watchdog armed: {} ms", wd_interval.count() / 1000);
    fw::Watchdog watchdog([&] { return fwd.loop_rounds(); }, [&] { return status_line(fwd); },
                          wd_interval);
    for (;;) {
      int sig = 0;
      sigwait(&sigs, &sig);
      if (sig != SIGHUP) {
        spdlog::info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        break;
      }
      fw::notify::reloading();
      fw::DaemonConfig running;
      {
        std::lock_guard lk(level_mu);
        running = cfg;
      }
      reload(config_file, cli, running, set_log_level);
      fw::notify::ready(status_line(fwd));
    }
    fw::notify::stopping();
    control.reset();
    metrics.reset();
    fwd.stop();
    pid_file.reset();
    if (!cfg.control_socket.empty()) ::unlink(cfg.control_socket.c_str());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
