#include "settings.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdlib>

extern char** environ;  // NOLINT: POSIX

namespace zipper::client {
namespace {

constexpr std::string_view kFamilyPrefix = "MMPI_";
constexpr std::string_view kFamilySuffix = "_ALGORITHM";

constexpr std::array<SettingInfo, 27> kTable = {{
    // The link (config.cpp, forwarder_pins.cpp).
    {"MMPI_FORWARDER", "text", "", "[tcp:|verbs:]HOST:PORT[,...]; unset: standalone"},
    {"MMPI_GROUP", "text", "", "low or high (with a forwarder)"},
    {"MMPI_NP_LOW", "count", "", "x >= 1, x + y <= 2^24 (with a forwarder)"},
    {"MMPI_NP_HIGH", "count", "", "y >= 1 (with a forwarder)"},
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
    // The collectives (collectives/selection.cpp; the scan in capi).
    {"MMPI_TUNING_FILE", "path", "", "a zipper-tune TOML file"},
    {"MMPI_SEGMENT_BYTES", "bytes", "the rule's", "0 or 1024 .. 2^40"},
    {"MMPI_INTER_SENDERS", "count", "the rule's", "an integer >= 1"},
    {"MMPI_<COLLECTIVE>_ALGORITHM", "text", "the rule's",
     "an algorithm of that collective (docs/collectives.md)"},
    {"MMPI_SCAN_ALGORITHM", "text", "carry", "carry or runs"},
    // Topologies (capi/topo_graph.cpp, capi/topo_reorder.cpp).
    {"MMPI_DIST_GRAPH_REORDER", "text", "0", "1 lets reorder move dist-graph vertices"},
    {"MMPI_LOG_LEVEL", "text", "", "debug logs topology reordering"},
    // One-sided communication (client/rma_progress.h, docs/rma.md).
    {"MMPI_RMA_PROGRESS", "text", "thread",
     "thread (a progress thread while a window exists; Open MPI initialised with "
     "MPI_THREAD_MULTIPLE) or off (targets serve inside MMPI calls only)"},
    {"MMPI_RMA_PROGRESS_INTERVAL_MS", "ms", "1",
     "1 .. 1000: the progress thread's longest sleep (traffic inside a cluster has no descriptor)"},
}};

bool named(std::string_view name) {
  for (const auto& s : kTable) {
    if (s.env == name) return true;
  }
  // The per-collective family: MMPI_<COLLECTIVE>_ALGORITHM.
  return name.size() > kFamilyPrefix.size() + kFamilySuffix.size() &&
         name.starts_with(kFamilyPrefix) && name.ends_with(kFamilySuffix);
}

}  // namespace

std::span<const SettingInfo> settings_table() { return kTable; }

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
  if (const char* v = env.get("MMPI_RMA_PROGRESS_INTERVAL_MS"); v != nullptr && *v != '\0') {
    int ms = 0;
    const std::string_view text(v);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec != std::errc{} || end != text.data() + text.size() || ms < 1 || ms > 1000) {
      if (why)
        *why = "MMPI_RMA_PROGRESS_INTERVAL_MS must be an integer from 1 to 1000, not '" +
               std::string(text) + "'";
      return std::nullopt;
    }
    r.interval = std::chrono::milliseconds(ms);
  }
  return r;
}

Environment Environment::capture() {
  Environment e;
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
    const std::string_view kv(*p);
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = kv.substr(0, eq);
    if (name.starts_with(kFamilyPrefix) && named(name))
      e.values_.emplace(std::string(name), std::string(kv.substr(eq + 1)));
  }
  return e;
}

const char* Environment::live(std::string_view name) {
  if (!named(name)) return nullptr;
  return std::getenv(std::string(name).c_str());
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
