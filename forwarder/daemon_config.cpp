#include "daemon_config.h"

// As in collectives/selection.cpp: one toml++ configuration per program.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <map>

namespace zipper::forwarder {

namespace {

// A setting's values arrive as text, from the command line or converted from
// TOML, and pass the same parser; `set` returns an error text or "".
using Setter = std::function<std::string(DaemonConfig&, const std::vector<std::string>&)>;
using Getter = std::function<std::string(const DaemonConfig&)>;

enum class Shape { kScalar, kSize, kInteger, kSeconds, kBool, kList, kListen };

struct Setting {
  SettingInfo info;
  Shape shape;
  Setter set;
  Getter get;
};

// Bytes, as a number or with a unit ("8MiB", "1GB"); CLI11's parser, so the
// file and the command line accept the same spellings.
std::string parse_size(std::string text, std::uint64_t lo, std::uint64_t hi, std::uint64_t* out) {
  const std::string given = text;
  try {
    const std::string err = CLI::AsSizeValue(false)(text);
    if (!err.empty()) throw std::invalid_argument(err);
    *out = std::stoull(text);
  } catch (const std::exception&) {
    return "expected a size in bytes (e.g. 8388608 or 8MiB), got '" + given + "'";
  }
  if (*out < lo || *out > hi)
    return "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " bytes, got " +
           given;
  return "";
}

template <class Access>
Setting size(const char* key, const char* flag, const char* help, bool reloadable, std::uint64_t lo,
             std::uint64_t hi, Access field) {
  return {
      {key, flag, help, reloadable},
      Shape::kSize,
      [=](DaemonConfig& c, const std::vector<std::string>& v) {
        std::uint64_t n = 0;
        std::string err = parse_size(v.back(), lo, hi, &n);
        if (err.empty()) field(c) = static_cast<std::remove_reference_t<decltype(field(c))>>(n);
        return err;
      },
      [=](const DaemonConfig& c) { return std::to_string(field(const_cast<DaemonConfig&>(c))); }};
}

template <class Access>
Setting text(const char* key, const char* flag, const char* help, bool reloadable, Access field,
             std::vector<std::string> choices = {}) {
  return {{key, flag, help, reloadable},
          Shape::kScalar,
          [=](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
            if (!choices.empty() &&
                std::find(choices.begin(), choices.end(), v.back()) == choices.end()) {
              std::string all;
              for (const auto& ch : choices) all += (all.empty() ? "" : ", ") + ch;
              return "expected one of " + all + ", got '" + v.back() + "'";
            }
            field(c) = v.back();
            return "";
          },
          [=](const DaemonConfig& c) { return field(const_cast<DaemonConfig&>(c)); }};
}

// A whole number in [lo, hi]; `scale` turns it into the field's unit.
template <class Access>
Setting integer(const char* key, const char* flag, const char* help, bool reloadable, long long lo,
                long long hi, Access field) {
  return {
      {key, flag, help, reloadable},
      Shape::kInteger,
      [=](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
        try {
          std::size_t used = 0;
          const long long n = std::stoll(v.back(), &used);
          if (used != v.back().size() || n < lo || n > hi) throw std::out_of_range("");
          field(c) = static_cast<std::remove_reference_t<decltype(field(c))>>(n);
          return "";
        } catch (const std::exception&) {
          return "expected a whole number from " + std::to_string(lo) + " to " +
                 std::to_string(hi) + ", got '" + v.back() + "'";
        }
      },
      [=](const DaemonConfig& c) { return std::to_string(field(const_cast<DaemonConfig&>(c))); }};
}

// Seconds (fractions allowed) in [lo, hi], kept in a millisecond field.
template <class Access>
Setting seconds(const char* key, const char* flag, const char* help, bool reloadable, double lo,
                double hi, Access field_ms) {
  return {{key, flag, help, reloadable},
          Shape::kSeconds,
          [=](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
            try {
              std::size_t used = 0;
              const double s = std::stod(v.back(), &used);
              if (used != v.back().size() || !(s >= lo && s <= hi)) throw std::out_of_range("");
              field_ms(c) = static_cast<int>(s * 1000 + 0.5);
              return "";
            } catch (const std::exception&) {
              return "expected seconds from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + v.back() + "'";
            }
          },
          [=](const DaemonConfig& c) {
            const int ms = field_ms(const_cast<DaemonConfig&>(c));
            return ms % 1000 == 0 ? std::to_string(ms / 1000) : std::to_string(ms / 1000.0);
          }};
}

template <class Access>
Setting boolean(const char* key, const char* flag, const char* help, bool reloadable,
                Access field) {
  return {{key, flag, help, reloadable},
          Shape::kBool,
          [=](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
            if (v.back() != "true" && v.back() != "false")
              return "expected true or false, got '" + v.back() + "'";
            field(c) = v.back() == "true";
            return "";
          },
          [=](const DaemonConfig& c) {
            return std::string(field(const_cast<DaemonConfig&>(c)) ? "true" : "false");
          }};
}

std::string set_pools(DaemonConfig& c, const std::vector<std::string>& v) {
  if (v.back().empty()) {
    c.forwarder.pools.clear();
    return "";
  }
  std::string why;
  auto classes = parse_pool_classes(v.back(), &why);
  if (!classes) return why;
  c.forwarder.pools = *classes;
  return "";
}

std::string get_pools(const DaemonConfig& c) {
  std::string out;
  for (const auto& k : c.forwarder.pools)
    out +=
        (out.empty() ? "" : ",") + std::to_string(k.buffer_bytes) + ":" + std::to_string(k.buffers);
  return out;
}

std::string set_munge_sockets(DaemonConfig& c, const std::vector<std::string>& v) {
  // Repeated flags, a TOML array, or comma-separated text: one per listener.
  c.forwarder.munge_socket.clear();
  for (const auto& t : v) {
    std::size_t at = 0;
    while (!t.empty() && at <= t.size()) {
      const std::size_t comma = std::min(t.find(',', at), t.size());
      c.forwarder.munge_socket.push_back(t.substr(at, comma - at));
      at = comma + 1;
    }
  }
  return "";
}

std::string get_munge_sockets(const DaemonConfig& c) {
  std::string out;
  for (const auto& m : c.forwarder.munge_socket) out += (out.empty() ? "" : ",") + m;
  return out;
}

// Legs in the order given: with group_sides the s-th serves every job's site s.
std::string set_listen(DaemonConfig& c, const std::vector<std::string>& v) {
  c.forwarder.listen.clear();
  for (const auto& spec : v) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return "expected NAME=[tcp:|verbs:]HOST:PORT, got '" + spec + "'";
    std::string why;
    auto ep = proto::parse_endpoint(spec.substr(eq + 1), &why);
    if (!ep) return why;
    const std::string name = spec.substr(0, eq);
    for (const auto& l : c.forwarder.listen)
      if (l.name == name) return "listener " + name + " is given twice";
    c.forwarder.listen.push_back({name, *ep});
  }
  return "";
}

std::string get_listen(const DaemonConfig& c) {
  std::string out;
  for (const auto& l : c.forwarder.listen)
    out += (out.empty() ? "" : " ") + l.name + "=" + l.endpoint.to_string();
  return out;
}

// The site graph (bridge_map.h): repeated flags, a TOML array, or
// comma-separated text.
std::vector<std::string> comma_list(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& t : v) {
    std::size_t at = 0;
    while (!t.empty() && at <= t.size()) {
      const std::size_t comma = std::min(t.find(',', at), t.size());
      if (comma > at) out.push_back(t.substr(at, comma - at));
      at = comma + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& e : v) out += (out.empty() ? "" : ",") + e;
  return out;
}

std::string set_peers(DaemonConfig& c, const std::vector<std::string>& v) {
  c.forwarder.peers.clear();
  for (const auto& t : comma_list(v)) {
    std::string why;
    auto p = parse_peer(t, &why);
    if (!p) return why;
    c.forwarder.peers.push_back(std::move(*p));
  }
  return "";
}

std::string get_peers(const DaemonConfig& c) {
  std::vector<std::string> v;
  for (const auto& p : c.forwarder.peers)
    v.push_back(p.name + (p.endpoint ? "=" + p.endpoint->to_string() : std::string()));
  return join(v);
}

// The table: one line per setting. To add one, add a field to Config or
// DaemonConfig and a line here; flag, key, parsing and SIGHUP follow.
const std::vector<Setting>& own_table() {
  static const std::vector<Setting> t = {
      {{"listen", "--listen",
        "NAME=[tcp:|verbs:]HOST:PORT, once per site (a leg; e.g. A=10.201.0.254:7470): the "
        "s-th leg serves site s of every job (--group-sides); in the file a [listen] table of "
        "NAME = \"ADDRESS\" (legs in the order of their names) or listen = [\"NAME=ADDRESS\", "
        "...] (legs in that order)",
        false},
       Shape::kListen,
       set_listen,
       get_listen},
      {{"routes.sites", "--site-names",
        "the deployment's site names in the jobs' site order, comma-separated (e.g. A,B,C); "
        "each listener is the leg of the site of its name (empty: the listeners' names, in "
        "order)",
        false},
       Shape::kList,
       [](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
         c.forwarder.site_names = comma_list(v);
         return "";
       },
       [](const DaemonConfig& c) { return join(c.forwarder.site_names); }},
      {{"routes.peers", "--peer",
        "another bridge node of the site graph, named by its legs: SITE[:COST]|SITE...[=HOST:PORT] "
        "(e.g. B|C=10.202.0.253:7470); the address where it shares a site with this bridge "
        "(docs/sites.md)",
        false},
       Shape::kList,
       set_peers,
       get_peers},
      {{"routes.peer_keys", "--peer-key",
        "a peer's pinned public host key: LEGS=HEX (64 hex digits, its zipperctl host-key); "
        "required for every peer sharing a site with this bridge",
        false},
       Shape::kList,
       [](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
         c.peer_keys = comma_list(v);
         return "";
       },
       [](const DaemonConfig& c) { return join(c.peer_keys); }},
      integer(
          "flow.conn_credits", "--conn-credits",
          "frames (pool buffers) one connection may have inside zipperd", false, 2, kMaxConnCredits,
          [](DaemonConfig & c) -> auto& { return c.forwarder.conn_credits; }),
      size(
          "flow.max_memory", "--max-memory", "bytes of all payload buffer pools together", false, 1,
          ~0ull, [](DaemonConfig & c) -> auto& { return c.forwarder.max_memory; }),
      {{"flow.pools", "--pools",
        "payload buffer pools, SIZE:COUNT per size class, e.g. 1KiB:2048,16KiB:960,128KiB:816,"
        "1MiB:136 (empty: split flow.max_memory)",
        false},
       Shape::kScalar,
       set_pools,
       get_pools},
      size(
          "flow.max_frame", "--max-frame", "largest frame payload accepted (bytes)", false, 1024,
          proto::kMaxPayloadLimit, [](DaemonConfig & c) -> auto& { return c.forwarder.max_frame; }),
      {{"flow.hello_timeout", "--hello-timeout", "seconds a new connection has to say hello",
        false},
       Shape::kInteger,
       [](DaemonConfig& c, const std::vector<std::string>& v) -> std::string {
         try {
           std::size_t used = 0;
           const long s = std::stol(v.back(), &used);
           if (used != v.back().size() || s < 1 || s > 3600) throw std::out_of_range("");
           c.forwarder.hello_timeout_ms = static_cast<int>(s * 1000);
           return "";
         } catch (const std::exception&) {
           return "expected whole seconds from 1 to 3600, got '" + v.back() + "'";
         }
       },
       [](const DaemonConfig& c) { return std::to_string(c.forwarder.hello_timeout_ms / 1000); }},
      text("admission.auth", "--auth",
           "'secret' (proof of the job secret), 'munge' (also a MUNGE credential; a job is "
           "kept to one uid, a tenant is a uid) or 'auto' (munge where munged answers on every "
           "listener, else secret; the default)",
           false, [](DaemonConfig & c) -> auto& { return c.forwarder.auth; },
           {"secret", "munge", "auto"}),
      {{"admission.munge_sockets", "--munge-socket",
        "munged socket per listener, comma-separated in listener order (clusters with different "
        "MUNGE keys); empty: libmunge's default",
        false},
       Shape::kList,
       set_munge_sockets,
       get_munge_sockets},
      boolean(
          "flow.splice", "--splice",
          "true: TCP-to-TCP payloads of 16-256 KiB move by splice() through pipes instead of "
          "being copied through zipperd",
          false, [](DaemonConfig & c) -> auto& { return c.forwarder.splice; }),
      boolean(
          "admission.group_sides", "--group-sides",
          "true: with two listeners or more, legs are sites: the ranks of a job's site s must "
          "use the s-th listener, and a job of more sites than listeners is refused",
          false, [](DaemonConfig & c) -> auto& { return c.forwarder.group_sides; }),
      integer(
          "limits.max_ranks", "--max-ranks", "largest layout x+y a job may claim", false, 2,
          1 << 24, [](DaemonConfig & c) -> auto& { return c.forwarder.max_ranks; }),
      integer(
          "limits.max_jobs", "--max-jobs", "jobs served at once", false, 1, 1 << 20,
          [](DaemonConfig & c) -> auto& { return c.forwarder.max_jobs; }),
      integer(
          "limits.max_connections", "--max-connections",
          "client connections at once, admitted or not", false, 1, 1 << 24,
          [](DaemonConfig & c) -> auto& { return c.forwarder.max_connections; }),
      integer(
          "limits.max_job_connections_share", "--max-job-connections-share",
          "percent of --max-connections one job's layout x+y may claim; larger layouts are "
          "refused (default 50)",
          false, 1, 100,
          [](DaemonConfig & c) -> auto& { return c.forwarder.max_job_connections_share; }),
      integer(
          "limits.max_jobs_per_user", "--max-jobs-per-user",
          "jobs at once per MUNGE uid (--auth munge), else per source address of a job's "
          "first rank (default 16)",
          false, 1, 1 << 20,
          [](DaemonConfig & c) -> auto& { return c.forwarder.max_jobs_per_user; }),
      integer(
          "limits.max_jobs_per_prefix", "--max-jobs-per-prefix",
          "jobs at once per source address prefix of a job's first rank (--prefix-v4, "
          "--prefix-v6; default 32)",
          false, 1, 1 << 20,
          [](DaemonConfig & c) -> auto& { return c.forwarder.max_jobs_per_prefix; }),
      integer(
          "limits.prefix_v4", "--prefix-v4",
          "bits of an IPv4 source address that --max-jobs-per-prefix groups by (default 24)", false,
          1, 32, [](DaemonConfig & c) -> auto& { return c.forwarder.prefix_v4; }),
      integer(
          "limits.prefix_v6", "--prefix-v6",
          "bits of an IPv6 source address that --max-jobs-per-prefix groups by (default 64)", false,
          1, 128, [](DaemonConfig & c) -> auto& { return c.forwarder.prefix_v6; }),
      seconds(
          "limits.idle_evict", "--idle-evict",
          "seconds a job may relay nothing before it may be evicted to admit a new job that a "
          "limit would refuse (default 300)",
          false, 0.1, 86400 * 7,
          [](DaemonConfig & c) -> auto& { return c.forwarder.idle_evict_ms; }),
      integer(
          "flow.control_budget", "--control-budget",
          "frames without payload (PING, CTS, ...) one connection may have handled per receive "
          "round before the loop moves on to the others (default 32)",
          false, 1, 1 << 16, [](DaemonConfig & c) -> auto& { return c.forwarder.control_budget; }),
      integer(
          "flow.ping_rate", "--ping-rate",
          "PINGs per second one connection has answered; one over it is dropped and the "
          "connection is not read until its next is due (default 64, burst 16; 0: no limit)",
          false, 0, 1000000, [](DaemonConfig & c) -> auto& { return c.forwarder.ping_rate; }),
      integer(
          "flow.tenant_ping_rate", "--tenant-ping-rate",
          "PINGs per second one tenant (MUNGE uid, else address prefix) has answered over all "
          "its connections, a second's worth back to back; one over it is answered up to 250 "
          "ms late, else dropped (default 16384; 0: no limit)",
          false, 0, 100000000,
          [](DaemonConfig & c) -> auto& { return c.forwarder.tenant_ping_rate; }),
      seconds(
          "timeouts.ready", "--ready-timeout",
          "seconds an admitted rank waits for the rest of its job before it is closed", false,
          0.001, 86400, [](DaemonConfig & c) -> auto& { return c.forwarder.ready_timeout_ms; }),
      seconds(
          "timeouts.frame", "--frame-timeout",
          "seconds a frame's payload may take to arrive after its header", false, 0.001, 86400,
          [](DaemonConfig & c) -> auto& { return c.forwarder.frame_timeout_ms; }),
      seconds(
          "timeouts.accept_pause", "--accept-pause",
          "seconds accepting pauses when zipperd runs out of file descriptors", false, 0.001, 3600,
          [](DaemonConfig & c) -> auto& { return c.forwarder.accept_pause_ms; }),
      integer(
          "timeouts.keepalive", "--keepalive",
          "TCP keepalive idle seconds on client links (0: off)", false, 0, 86400,
          [](DaemonConfig & c) -> auto& { return c.forwarder.keepalive_s; }),
      text("log.level", "--log-level", "trace, debug, info, warn, error", true,
           [](DaemonConfig & c) -> auto& { return c.log_level; },
           {"trace", "debug", "info", "warn", "error"}),
      text(
          "service.pid_file", "--pid-file",
          "write the pid here once every listener is bound (a new file: O_EXCL|O_NOFOLLOW; "
          "use a private directory such as /run/zipper)",
          false, [](DaemonConfig & c) -> auto& { return c.pid_file; }),
      text(
          "service.host_key", "--host-key",
          "host key file clients pin (e.g. /etc/zipper/host_key, mode 0600; created with "
          "PATH.pub when absent); empty: a key for this run only",
          false, [](DaemonConfig & c) -> auto& { return c.host_key; }),
      text(
          "control.socket", "--control-socket",
          "Unix socket for zipperctl (e.g. /run/zipper/zipperd.sock); empty: none", false,
          [](DaemonConfig & c) -> auto& { return c.control_socket; }),
      text(
          "metrics.listen", "--metrics-listen",
          "HOST:PORT to serve Prometheus metrics on (GET /metrics); empty: none", false,
          [](DaemonConfig & c) -> auto& { return c.metrics_listen; }),
      text("metrics.job_series", "--metrics-job-series",
           "'label': per-job series, named by the job's hashed label (never its id); 'none': "
           "totals only",
           false, [](DaemonConfig & c) -> auto& { return c.metrics_job_series; },
           {"label", "none"}),
  };
  return t;
}

// own_table(), then the verbs link's rows that reach accepted links
// (proto/verbs/config.h owns their names, ranges and parsing; the
// connect-only rows are libmmpi's alone).
const std::vector<Setting>& table() {
  static const std::vector<Setting> t = [] {
    std::vector<Setting> rows = own_table();
    for (const auto& v : proto::verbs::settings()) {
      if (v.connect_only) continue;
      std::string flag = "--verbs-" + v.key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      const std::string name = v.key;
      rows.push_back(
          {{"verbs." + v.key, flag, v.help + " (" + v.check + "; verbs: listeners)", false},
           v.integer ? Shape::kInteger : Shape::kScalar,
           [name](DaemonConfig& c, const std::vector<std::string>& val) {
             return proto::verbs::set(&c.forwarder.verbs, name, val.back());
           },
           [name](const DaemonConfig& c) {
             return proto::verbs::value_of(c.forwarder.verbs, name);
           }});
    }
    return rows;
  }();
  return t;
}

const Setting* find_key(const std::string& key) {
  for (const auto& s : table())
    if (s.info.key == key) return &s;
  return nullptr;
}

bool is_section(const std::string& prefix) {
  for (const auto& s : table())
    if (s.info.key.rfind(prefix + ".", 0) == 0) return true;
  return false;
}

std::string where(const std::string& file, const toml::node& n) {
  const auto& src = n.source();
  return file + ":" + std::to_string(src.begin.line) + ": ";
}

// TOML value -> the texts the setter takes; empty optional with `why` on a wrong type.
std::vector<std::string> texts_of(const Setting& s, const toml::node& n, std::string* why) {
  std::vector<std::string> out;
  switch (s.shape) {
    case Shape::kListen:
      if (const auto* a = n.as_array()) {
        for (const auto& e : *a) {
          if (!e.is_string()) {
            *why = "expected an array of \"NAME=HOST:PORT\" strings";
            return {};
          }
          out.push_back(*e.value<std::string>());
        }
        return out;
      }
      if (const auto* t = n.as_table()) {
        for (const auto& [name, addr] : *t) {
          if (!addr.is_string()) {
            *why = "listener '" + std::string(name.str()) + "' must be a string \"HOST:PORT\"";
            return {};
          }
          out.push_back(std::string(name.str()) + "=" + *addr.value<std::string>());
        }
        return out;  // empty: none from the file (the command line may give them)
      }
      *why =
          "expected a table of NAME = \"HOST:PORT\" ([listen]) or an array of "
          "\"NAME=HOST:PORT\"";
      return {};
    case Shape::kSize:
      if (n.is_integer()) return {std::to_string(*n.value<std::int64_t>())};
      if (n.is_string()) return {*n.value<std::string>()};
      *why = "expected a size (an integer number of bytes or a string like \"8MiB\")";
      return {};
    case Shape::kInteger:
      if (n.is_integer()) return {std::to_string(*n.value<std::int64_t>())};
      *why = "expected an integer";
      return {};
    case Shape::kList:
      if (n.is_string()) return {*n.value<std::string>()};
      if (const auto* a = n.as_array()) {
        for (const auto& e : *a) {
          if (!e.is_string()) {
            *why = "expected an array of strings";
            return {};
          }
          out.push_back(*e.value<std::string>());
        }
        return out;
      }
      *why = "expected a string or an array of strings";
      return {};
    case Shape::kBool:
      if (n.is_boolean()) return {*n.value<bool>() ? "true" : "false"};
      *why = "expected true or false";
      return {};
    case Shape::kSeconds:
      if (n.is_integer()) return {std::to_string(*n.value<std::int64_t>())};
      if (n.is_floating_point()) return {std::to_string(*n.value<double>())};
      *why = "expected a number of seconds";
      return {};
    case Shape::kScalar:
      if (n.is_string()) return {*n.value<std::string>()};
      *why = "expected a string";
      return {};
  }
  return {};
}

void apply_table(DaemonConfig& cfg, const std::string& file, const toml::table& t,
                 const std::string& prefix) {
  for (const auto& [k, node] : t) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const Setting* s = find_key(key)) {
      std::string why;
      const auto v = texts_of(*s, node, &why);
      if (why.empty()) why = s->set(cfg, v);
      if (!why.empty() && s->shape == Shape::kListen && node.is_table()) {
        // Name the listener entry at fault, with its own line.
        for (const auto& [name, addr] : *node.as_table()) {
          DaemonConfig scratch;
          const std::string one = std::string(name.str()) + "=" + addr.value_or(std::string());
          if (auto w = s->set(scratch, {one}); !w.empty())
            throw ConfigError(where(file, addr) + "key '" + key + "." + std::string(name.str()) +
                              "': " + w);
        }
      }
      if (!why.empty()) throw ConfigError(where(file, node) + "key '" + key + "': " + why);
    } else if (node.is_table() && is_section(key)) {
      apply_table(cfg, file, *node.as_table(), key);
    } else {
      throw ConfigError(where(file, node) + "unknown key '" + key +
                        "' (zipperd --help lists the settings; the file's keys are in "
                        "/usr/share/doc/zipper/examples/zipperd.toml)");
    }
  }
}

}  // namespace

std::vector<SettingInfo> settings() {
  std::vector<SettingInfo> out;
  for (const auto& s : table()) out.push_back(s.info);
  return out;
}

namespace {

// What --help shows as the value of a setting's flag.
std::string value_name(const Setting& s) {
  static const std::map<std::string, std::string> by_flag = {
      {"--pools", "SIZE:COUNT,..."},  {"--auth", "secret|munge|auto"},
      {"--log-level", "LEVEL"},       {"--pid-file", "PATH"},
      {"--control-socket", "PATH"},   {"--metrics-listen", "HOST:PORT"},
      {"--munge-socket", "PATH,..."}, {"--listen", "NAME=ADDRESS"},
      {"--hello-timeout", "SECONDS"}, {"--keepalive", "SECONDS"},
      {"--host-key", "PATH"},         {"--metrics-job-series", "label|none"},
      {"--site-names", "NAME,..."},   {"--peer", "LEGS[=ADDRESS]"},
      {"--peer-key", "LEGS=HEX"}};
  if (auto it = by_flag.find(s.info.flag); it != by_flag.end()) return it->second;
  switch (s.shape) {
    case Shape::kSize:
      return "BYTES";
    case Shape::kInteger:
      return "N";
    case Shape::kSeconds:
      return "SECONDS";
    case Shape::kBool:
      return "true|false";
    default:
      return "TEXT";
  }
}

}  // namespace

void add_options(CLI::App& app, CommandLine& out) {
  const DaemonConfig defaults;
  for (const auto& s : table()) {
    const std::string flag = s.info.flag;
    const std::string def = s.get(defaults);
    std::string help = s.info.help + " [file: " + s.info.key + "]";
    if (def.empty()) help += " (default: none)";
    CLI::Option* o = nullptr;
    if (s.shape == Shape::kListen || s.shape == Shape::kList) {
      o = app.add_option_function<std::vector<std::string>>(
          flag, [&out, flag](const std::vector<std::string>& v) { out[flag] = v; }, help);
    } else {
      o = app.add_option_function<std::string>(
          flag, [&out, flag](const std::string& v) { out[flag] = {v}; }, help);
    }
    o->type_name(value_name(s));
    if (!def.empty()) o->default_str(def);
  }
}

DaemonConfig load(const std::string& file, const CommandLine& cli) {
  DaemonConfig cfg;
  if (!file.empty()) {
    toml::parse_result doc = toml::parse_file(file);
    if (!doc) {
      const auto& e = doc.error();
      const auto& b = e.source().begin;
      if (b.line == 0) throw ConfigError(file + ": " + std::string(e.description()));
      throw ConfigError(file + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                        ": " + std::string(e.description()));
    }
    apply_table(cfg, file, doc.table(), "");
  }
  for (const auto& s : table()) {
    auto it = cli.find(s.info.flag);
    if (it == cli.end()) continue;
    if (auto why = s.set(cfg, it->second); !why.empty())
      throw ConfigError(s.info.flag + ": " + why);
  }
  if (cfg.forwarder.listen.empty())
    throw ConfigError("no listener: give --listen NAME=HOST:PORT" +
                      (file.empty() ? std::string() : " or a [listen] table in " + file));
  // Keys pin peers whatever the order they came in; then the graph must hold.
  for (const auto& k : cfg.peer_keys) {
    std::string why;
    if (!pin_peer_key(k, cfg.forwarder.peers, &why)) throw ConfigError("--peer-key: " + why);
  }
  std::vector<std::string> legs;
  for (const auto& l : cfg.forwarder.listen) legs.push_back(l.name);
  try {
    make_bridge_map(legs, cfg.forwarder.site_names, cfg.forwarder.peers);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("routes: ") + e.what());
  }
  return cfg;
}

ConfigDiff diff(const DaemonConfig& running, const DaemonConfig& reloaded) {
  ConfigDiff d;
  for (const auto& s : table()) {
    if (s.get(running) == s.get(reloaded)) continue;
    (s.info.reloadable ? d.applicable : d.needs_restart).push_back(s.info.key);
  }
  return d;
}

std::string value_of(const DaemonConfig& cfg, const std::string& key) {
  const Setting* s = find_key(key);
  if (!s) throw std::invalid_argument("no setting '" + key + "'");
  return s->get(cfg);
}

}  // namespace zipper::forwarder
