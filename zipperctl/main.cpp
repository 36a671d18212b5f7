// zipperctl: inspects and steers a running zipperd over its control socket,
// in the spirit of lnetctl. Human tables by default, --json for scripts.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "control_client.h"
#include "tables.h"

int main(int argc, char** argv) {
  using nlohmann::json;
  CLI::App app{"zipperctl: show and steer a running zipperd"};
  const char* env = std::getenv("ZIPPER_CONTROL_SOCKET");
  std::string socket = env ? env : "/run/zipper/zipperd.sock";
  bool as_json = false;
  app.add_option("-s,--socket", socket, "zipperd's control socket ($ZIPPER_CONTROL_SOCKET)")
      ->type_name("PATH")
      ->capture_default_str();
  app.add_flag("--json", as_json, "print the answer as JSON (stable field names, for scripts)");
  app.set_version_flag("--version", std::string("zipperctl ") + ZIPPER_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // --json and --socket also after the command (inherited by the subcommands)
  app.footer("Exit status: 0 done, 1 zipperd unreachable or refused, 2 usage.");

  auto* status = app.add_subcommand("status", "state (running or draining), totals and sides");
  auto* jobs = app.add_subcommand(
      "jobs", "per job: ranks connected, bytes and frames each way, age (finished jobs too)");
  auto* links = app.add_subcommand(
      "links", "per connection: side, peer, credit in use, queued bytes, stalls, errors");
  auto* pools = app.add_subcommand("pools", "buffer pools by class: in use and peak");
  auto* routes = app.add_subcommand(
      "routes", "per destination site: hops, cost, next hops (equal-cost: all), traffic sent");
  auto* drain = app.add_subcommand("drain", "admit no new jobs; running jobs finish");
  bool wait = false;
  int wait_s = 0;
  drain->add_flag("--wait", wait, "return once no job is running");
  drain->add_option("--timeout", wait_s, "with --wait: give up after this many seconds (0: never)")
      ->type_name("SECONDS")
      ->capture_default_str();
  auto* resume = app.add_subcommand("resume", "end a drain: admit new jobs again");
  auto* set = app.add_subcommand("set", "change a setting at run time");
  std::string key, value;
  set->add_option("key", key, "log-level")->required()->check(CLI::IsMember({"log-level"}));
  set->add_option("value", value, "trace, debug, info, warn or error")->required();
  auto* metrics = app.add_subcommand(
      "metrics", "print Prometheus text (node_exporter textfile collector alternative)");
  auto* host_key = app.add_subcommand(
      "host-key",
      "print zipperd's public host key (64 hex digits), for MMPI_FORWARDER_KEYS or the "
      "site's known_forwarders");
  std::string known_for;
  host_key
      ->add_option("--for", known_for,
                   "print a known_forwarders line instead: the addresses ranks use for this "
                   "zipperd (HOST:PORT[,HOST:PORT...], as in MMPI_FORWARDER), then the key")
      ->type_name("ADDRS");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help, --version: 0; usage: 2
  }

  try {
    namespace ctl = zipper::ctl;
    json answer;
    if (*status || *jobs || *links || *pools || *routes) {
      answer = ctl::request(socket, {{"cmd", app.get_subcommands().front()->get_name()}});
      if (as_json) {
        const std::string name = app.get_subcommands().front()->get_name();
        std::puts((name == "status" ? answer.at("status") : answer.at(name)).dump(2).c_str());
      } else if (*status) {
        std::fputs(ctl::render_status(answer).c_str(), stdout);
      } else if (*jobs) {
        std::fputs(ctl::render_jobs(answer).c_str(), stdout);
      } else if (*links) {
        std::fputs(ctl::render_links(answer).c_str(), stdout);
      } else if (*routes) {
        std::fputs(ctl::render_routes(answer).c_str(), stdout);
      } else {
        std::fputs(ctl::render_pools(answer).c_str(), stdout);
      }
    } else if (*drain || *resume) {
      answer = ctl::request(socket, {{"cmd", "drain"}, {"on", bool(*drain)}});
      const auto t0 = std::chrono::steady_clock::now();
      std::uint64_t running = 0;
      for (;;) {
        running = ctl::request(socket, {{"cmd", "status"}}).at("status").at("jobs_active");
        if (!*drain || !wait || running == 0) break;
        if (wait_s > 0 && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(wait_s)) {
          std::fprintf(stderr, "zipperctl: %llu jobs still running after %d s\n",
                       static_cast<unsigned long long>(running), wait_s);
          return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      if (as_json)
        std::puts(json{{"draining", bool(*drain)}, {"jobs_active", running}}.dump(2).c_str());
      else
        std::printf("%s; %llu jobs running\n", *drain ? "draining" : "admitting new jobs",
                    static_cast<unsigned long long>(running));
    } else if (*set) {
      ctl::request(socket, {{"cmd", "set"}, {"key", key}, {"value", value}});
      if (as_json) std::puts(json{{key, value}}.dump(2).c_str());
    } else if (*host_key) {
      answer = ctl::request(socket, {{"cmd", "host-key"}});
      const std::string k = answer.at("host_key").get<std::string>();
      if (as_json)
        std::puts(json{{"host_key", k}}.dump(2).c_str());
      else if (!known_for.empty())
        std::printf("%s %s\n", known_for.c_str(), k.c_str());
      else
        std::puts(k.c_str());
    } else if (*metrics) {
      answer = ctl::request(socket, {{"cmd", "metrics"}});
      std::fputs(answer.at("text").get<std::string>().c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipperctl: %s\n", e.what());
    return 1;
  }
  return 0;
}
