// zipperd's settings: the forwarder core's Config plus what the daemon around
// it needs (logging, control socket, metrics). One table (daemon_config.cpp)
// names every setting once; from it come the command-line flags, the keys of
// /etc/zipper/zipperd.toml, their validation and what SIGHUP may change.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "forwarder_config.h"

namespace CLI {
class App;
}

namespace zipper::forwarder {

struct DaemonConfig {
  // zipperd's defaults over the core's: MUNGE where munged runs (auth_mode.h).
  Config forwarder = [] {
    Config c;
    c.auth = "auto";
    return c;
  }();
  std::string log_level = "info";  // trace, debug, info, warn, error
  std::string pid_file;            // written once every listener is bound; empty: none
  // zipperd's host key file (proto/host_key.h), created at first start when
  // absent; empty: a key that lives in memory for this run only.
  std::string host_key;
  std::string control_socket;                // Unix socket for zipperctl; empty: none
  std::string metrics_listen;                // HOST:PORT for Prometheus /metrics; empty: none
  std::string metrics_job_series = "label";  // "label": per-job series by hashed label; "none"
  // --peer-key texts (LEGS=HEX), pinned on forwarder.peers once all are read.
  std::vector<std::string> peer_keys;
};

/// A refused setting. what() names the file, line and key (or the flag).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One setting as the table describes it.
struct SettingInfo {
  std::string key;   // TOML key, dotted ("flow.conn_credits")
  std::string flag;  // command-line flag ("--conn-credits")
  std::string help;
  bool reloadable;  // SIGHUP applies it without a restart
};
/// Every setting, in table order (for docs and tests).
std::vector<SettingInfo> settings();

/// Command-line values, as given, by flag (only flags present on the line).
using CommandLine = std::map<std::string, std::vector<std::string>>;

/// Registers one CLI11 option per setting on `app`, storing into `out`.
/// After app.parse(), `out` holds the flags that were given.
void add_options(CLI::App& app, CommandLine& out);

/// Builds the settings: defaults, then `file` (TOML; skipped when empty),
/// then `cli`. Throws ConfigError naming file, line and key for an unknown
/// key, a value of the wrong type or out of range, and for a missing file.
DaemonConfig load(const std::string& file, const CommandLine& cli);

/// What changed between two loads, split by whether SIGHUP may apply it.
struct ConfigDiff {
  std::vector<std::string> applicable;     // keys that may change now
  std::vector<std::string> needs_restart;  // keys whose new value waits for a restart
};
ConfigDiff diff(const DaemonConfig& running, const DaemonConfig& reloaded);

/// Renders one setting's value as the file would hold it ("8388608", "info").
std::string value_of(const DaemonConfig& cfg, const std::string& key);

}  // namespace zipper::forwarder
