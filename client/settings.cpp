#include "settings.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <initializer_list>
#include <vector>

#include "../proto/verbs/config.h"

extern char** environ;  // NOLINT: POSIX

namespace zipper::client {
namespace {

constexpr std::string_view kFamilyPrefix = "MMPI_";
constexpr std::string_view kFamilySuffix = "_ALGORITHM";

constexpr std::array<SettingInfo, 33> kTable = {{
    // The link (config.cpp, forwarder_pins.cpp).
    {"MMPI_FORWARDER", "text", "", "[tcp:|verbs:]HOST:PORT[,...]; unset: standalone"},
    {"MMPI_SITES", "counts", "",
     "ranks per site in world-rank order, N1,N2[,...]: 2 to 64 sites of >= 1 rank, <= 2^24 in "
     "all (with a forwarder; unset: MMPI_NP_LOW, MMPI_NP_HIGH)"},
    {"MMPI_SITE", "count", "", "this process's site, 0 .. sites - 1 (with MMPI_SITES)"},
    {"MMPI_GROUP", "text", "", "low or high (with a forwarder, without MMPI_SITES)"},
    {"MMPI_NP_LOW", "count", "", "x >= 1, x + y <= 2^24 (with a forwarder, without MMPI_SITES)"},
    {"MMPI_NP_HIGH", "count", "", "y >= 1 (with a forwarder, without MMPI_SITES)"},
    {"MMPI_JOB_ID", "count", "derived from the secret", "a non-negative integer"},
    {"MMPI_JOB_SECRET", "text", "", "64 hex digits; removed from the environment once read"},
    {"MMPI_JOB_SECRET_FD", "count", "", "an open descriptor holding the secret; removed once read"},
    {"MMPI_JOB_SECRET_FILE", "path", "", "a file of the user's, mode 0600, holding the secret"},
    {"MMPI_MUNGE_SOCKET", "path", "libmunge's", "munged's socket"},
    {"MMPI_FORWARDER_KEYS", "keys", "", "one public key per address of MMPI_FORWARDER"},
    {"MMPI_KNOWN_FORWARDERS", "path", "PREFIX/etc/zipper/known_forwarders", "HOST:PORT KEY lines"},
    {"MMPI_FORWARDER_KEY_CHECK", "text", "strict when a key is pinned, else accept",
     "strict or accept"},
    {"MMPI_EAGER_LIMIT", "bytes", "16384", "a non-negative integer"},
    {"MMPI_CHUNK_SIZE", "bytes", "131072", "at least 1024"},
    {"MMPI_CONNECT_TIMEOUT", "seconds", "60", "a non-negative integer"},
    {"MMPI_FORWARDER_TIMEOUT", "ms", "3000 (several forwarders; one: no PING)",
     "a non-negative integer, at most 3600000 used"},
    {"MMPI_RETRANSMIT_BYTES", "bytes", "33554432", "a non-negative integer"},
    {"MMPI_SPIN_ROUNDS", "count", "1000", "a non-negative integer, at most 2^30 used"},
    // Placement (client/world_placement.h, client/traffic_profile.h, docs/placement.md).
    {"MMPI_RANK_MAP", "text", "block order",
     "each site's MPI_COMM_WORLD ranks: 'a-b,c;d,...' (zipper-run --rank-map)"},
    {"MMPI_PROFILE", "path", "",
     "the communication matrix MPI_COMM_WORLD rank 0 writes at MMPI_Finalize (zipper-run "
     "--profile)"},
    // The collectives (collectives/selection.cpp; the scan in capi).
    {"MMPI_TUNING_FILE", "path", "", "a zipper-tune TOML file"},
    {"MMPI_SEGMENT_BYTES", "bytes", "the rule's", "0 or 1024 .. 2^40"},
    {"MMPI_INTER_SENDERS", "count", "the rule's", "an integer >= 1"},
    {"MMPI_<COLLECTIVE>_ALGORITHM", "text", "the rule's",
     "an algorithm of that collective (docs/collectives.md)"},
    {"MMPI_SCAN_ALGORITHM", "text", "carry", "carry or runs"},
    // Topologies (capi/topo_graph.cpp, capi/topo_reorder.cpp).
    {"MMPI_DIST_GRAPH_REORDER", "text", "0", "0, or 1: reorder may move dist-graph vertices"},
    {"MMPI_LOG_LEVEL", "text", "off",
     "trace, debug (both log topology reordering and the scan algorithm), info, warn, error, "
     "critical or off"},
    // MPI-IO across the clusters (capi/file_lock.h, docs/io.md).
    {"MMPI_FILE_LOCK_TIMEOUT", "seconds", "300",
     "1 .. 86400: the longest wait for the aux file's byte-range lock"},
    // One-sided communication (client/rma_progress.h, docs/rma.md).
    {"MMPI_RMA_PROGRESS", "text", "thread",
     "thread (a progress thread while a window exists; Open MPI initialised with "
     "MPI_THREAD_MULTIPLE) or off (targets serve inside MMPI calls only)"},
    {"MMPI_RMA_PROGRESS_INTERVAL_MS", "ms", "1",
     "1 .. 1000: the progress thread's longest sleep (traffic inside a cluster has no descriptor)"},
    {"MMPI_RMA_REPLY_BYTES", "bytes", "4194304",
     "131072 .. 1073741824: fetched data a target holds for one origin at a time"},
}};

bool named(std::string_view name) {
  for (const auto& s : settings_table()) {
    if (s.env == name) return true;
  }
  // The per-collective family: MMPI_<COLLECTIVE>_ALGORITHM.
  return name.size() > kFamilyPrefix.size() + kFamilySuffix.size() &&
         name.starts_with(kFamilyPrefix) && name.ends_with(kFamilySuffix);
}

// `name`'s value as an integer in lo .. hi into *out; unset or empty keeps
// *out. Anything else: false, `why` names the variable.
bool integer_in(const Environment& env, std::string_view name, int lo, int hi,
                std::string_view unit, int* out, std::string* why) {
  const char* v = env.get(name);
  if (v == nullptr || *v == '\0') return true;
  int x = 0;
  const std::string_view text(v);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc{} || end != text.data() + text.size() || x < lo || x > hi) {
    if (why)
      *why = std::string(name) + " must be an integer from " + std::to_string(lo) + " to " +
             std::to_string(hi) + " (" + std::string(unit) + "), not '" + std::string(text) + "'";
    return false;
  }
  *out = x;
  return true;
}

}  // namespace

std::span<const SettingInfo> settings_table() {
  // kTable, then the verbs link's rows (proto/verbs/config.h owns their
  // names, defaults and checks; config.cpp reads them).
  static const std::vector<SettingInfo> all = [] {
    std::vector<SettingInfo> v(kTable.begin(), kTable.end());
    for (const auto& r : proto::verbs::settings())
      v.push_back({r.env, r.type, r.fallback.empty() ? "by subnet" : r.fallback, r.check});
    return v;
  }();
  return all;
}

std::optional<RmaSettings> rma_settings_from(const Environment& env, std::string* why) {
  RmaSettings r;
  if (const char* v = env.get("MMPI_RMA_PROGRESS"); v != nullptr && *v != '\0') {
    const std::string_view mode(v);
    if (mode != "thread" && mode != "off") {
      if (why) *why = "MMPI_RMA_PROGRESS must be thread or off, not '" + std::string(mode) + "'";
      return std::nullopt;
    }
    r.progress_thread = mode == "thread";
  }
  int ms = static_cast<int>(r.interval.count());
  if (!integer_in(env, "MMPI_RMA_PROGRESS_INTERVAL_MS", 1, 1000, "ms", &ms, why))
    return std::nullopt;
  r.interval = std::chrono::milliseconds(ms);
  int reply = static_cast<int>(r.reply_bytes);
  if (!integer_in(env, "MMPI_RMA_REPLY_BYTES", 1 << 17, 1 << 30, "bytes", &reply, why))
    return std::nullopt;
  r.reply_bytes = static_cast<std::uint64_t>(reply);
  return r;
}

std::optional<CallSettings> call_settings_from(const Environment& env, std::string* why) {
  CallSettings c;
  // One of `allowed`, or nullptr when unset or empty; a value outside them
  // fails with a line naming the variable.
  bool ok = true;
  auto choice = [&](std::string_view name,
                    std::initializer_list<std::string_view> allowed) -> const char* {
    const char* v = env.get(name);
    if (!ok || v == nullptr || *v == '\0') return nullptr;
    for (std::string_view a : allowed) {
      if (a == v) return v;
    }
    if (why) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      *why = std::string(name) + " must be one of " + list + ", not '" + v + "'";
    }
    ok = false;
    return nullptr;
  };
  if (const char* v = choice("MMPI_SCAN_ALGORITHM", {"carry", "runs"}))
    c.scan_runs = std::string_view(v) == "runs";
  if (const char* v = choice("MMPI_DIST_GRAPH_REORDER", {"0", "1"}))
    c.dist_graph_reorder = std::string_view(v) == "1";
  if (const char* v =
          choice("MMPI_LOG_LEVEL", {"trace", "debug", "info", "warn", "error", "critical", "off"}))
    c.debug_log = std::string_view(v) == "trace" || std::string_view(v) == "debug";
  if (!ok) return std::nullopt;
  int lock_s = static_cast<int>(c.file_lock_timeout.count());
  if (!integer_in(env, "MMPI_FILE_LOCK_TIMEOUT", 1, 86400, "seconds", &lock_s, why))
    return std::nullopt;
  c.file_lock_timeout = std::chrono::seconds(lock_s);
  return c;
}

Environment Environment::capture() {
  Environment e;
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
    const std::string_view kv(*p);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    if (named(name)) e.values_.emplace(std::string(name), std::string(kv.substr(eq + 1)));
  }
  return e;
}

Environment Environment::of(std::map<std::string, std::string, std::less<>> values) {
  Environment e;
  e.values_ = std::move(values);
  return e;
}

const char* Environment::get(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second.c_str();
}

void Environment::forget(std::string_view name) {
  if (auto it = values_.find(name); it != values_.end()) values_.erase(it);
}

}  // namespace zipper::client
