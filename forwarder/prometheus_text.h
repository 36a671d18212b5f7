// Renders a Snapshot in the Prometheus text exposition format (version
// 0.0.4), as served on /metrics and written by `zipperctl metrics` for
// node_exporter's textfile collector. Metric names: docs/operations.md.
#pragma once

#include <string>

#include "snapshot.h"

namespace zipper::forwarder {

struct BuildInfo {
  std::string version;  // project version, e.g. "0.1.0"
  std::string commit;   // git commit at configure time, or "unknown"
};

BuildInfo build_info();
std::string prometheus_text(const Snapshot& s, const BuildInfo& build);

}  // namespace zipper::forwarder
