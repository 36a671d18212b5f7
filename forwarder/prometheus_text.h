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

struct MetricsOptions {
  /// Per-job series (zipper_job_*), labelled job="LABEL" with the job's
  /// hashed label; false (metrics.job_series = "none"): totals only, for a
  /// /metrics that people outside the jobs can reach.
  bool per_job_series = true;
};
std::string prometheus_text(const Snapshot& s, const BuildInfo& build,
                            const MetricsOptions& options = {});

}  // namespace zipper::forwarder
