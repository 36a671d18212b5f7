// libmmpi's settings: one table names every environment variable the
// library reads, once, with its type, default and check (after
// forwarder/daemon_config.h). The environment is read once, at MMPI_Init
// (Environment::capture); the configuration made from it is passed down:
// the link's part (config.h, forwarder_pins.h) here, the collectives' part
// by collectives/selection.h, which knows the collectives' names.
// Variables zipper-run sets are described in docs/launch-contract.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config.h"
#include "environment.h"

namespace zipper::client {

/// One row of the table.
struct SettingInfo {
  std::string_view env;       // the variable; MMPI_<COLLECTIVE>_ALGORITHM names a family
  std::string_view type;      // what the value is: bytes, ms, seconds, count, text, path, keys
  std::string_view fallback;  // the default when unset ("" = none)
  std::string_view check;     // what is accepted; anything else fails MMPI_Init (or the call)
};

/// Every setting of libmmpi, each once.
std::span<const SettingInfo> settings_table();

/// One-sided communication's part (docs/rma.md, client/rma_progress.h).
struct RmaSettings {
  /// MMPI_RMA_PROGRESS: "thread" (true, the default: a progress thread while
  /// a window exists, Open MPI at MPI_THREAD_MULTIPLE) or "off" (false).
  bool progress_thread = true;
  /// MMPI_RMA_PROGRESS_INTERVAL_MS: the thread's longest sleep, 1 .. 1000 ms.
  std::chrono::milliseconds interval{1};
  /// MMPI_RMA_REPLY_BYTES: the most bytes of fetched data (Get,
  /// Get_accumulate replies) a target holds for one origin at a time, 2^17 ..
  /// 2^30; origins cut fetching operations into pieces of half of it.
  std::uint64_t reply_bytes = std::uint64_t{4} << 20;
};

/// RMA's part of `env`. A bad value (MMPI_RMA_PROGRESS not thread/off, an
/// interval not an integer in 1 .. 1000, a reply bound outside its range):
/// nullopt, `why` names the variable.
/// An empty value keeps the default.
std::optional<RmaSettings> rma_settings_from(const Environment& env, std::string* why);

/// The settings the MPI calls read (capi/): once at MMPI_Init like the rest,
/// so that a bad value stops the job there, not at the call.
struct CallSettings {
  /// MMPI_SCAN_ALGORITHM: "carry" (false, the default; used only where each
  /// cluster is one run of ranks) or "runs" (true; any layout).
  bool scan_runs = false;
  /// MMPI_DIST_GRAPH_REORDER: "1" lets reorder move dist-graph vertices
  /// between processes; "0" (the default) keeps vertex i at rank i.
  bool dist_graph_reorder = false;
  /// MMPI_LOG_LEVEL: debug or trace log topology reordering on rank 0 and
  /// each scan/exscan's algorithm on the communicator's rank 0 (stderr);
  /// info, warn, error, critical and off (the default) log nothing more.
  bool debug_log = false;
  /// MMPI_FILE_LOCK_TIMEOUT: the longest wait for an aux-file byte-range
  /// lock (capi/file_lock.h), 1 .. 86400 s.
  std::chrono::seconds file_lock_timeout{300};
};

/// The calls' part of `env`. A bad value: nullopt, `why` names the variable.
/// An empty value keeps the default.
std::optional<CallSettings> call_settings_from(const Environment& env, std::string* why);

/// libmmpi's configuration for this process, made once at MMPI_Init
/// (Runtime::init) and passed down.
struct Settings {
  Environment env;      // the values as read (collectives/selection.h takes its part)
  ClientConfig client;  // the link (config.h)
  RmaSettings rma;      // one-sided communication
  CallSettings calls;   // the MPI calls' switches (scan, topologies, MPI-IO locks)
};

}  // namespace zipper::client
