// What zipper-loadgen reads about a zipperd: its resident memory and CPU
// time from /proc/PID, and its counters from GET /metrics (Prometheus text).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace zipper::loadgen {

/// /proc/PID/status and /proc/PID/stat at one instant.
struct ProcSample {
  std::uint64_t rss_kib = 0;  // VmRSS
  std::uint64_t hwm_kib = 0;  // VmHWM: the most resident at once so far
  double cpu_s = 0;           // run time of its threads (schedstat), else user + system
};
/// nullopt when the process is gone or /proc cannot be read.
std::optional<ProcSample> read_proc(pid_t pid);

/// One scrape of /metrics: every sample in the order zipperd wrote them.
class MetricsText {
 public:
  struct Sample {
    std::string name, labels;  // labels: the text between the braces, "" when none
    double value = 0;
  };
  /// Parses Prometheus text; lines it cannot read are skipped.
  explicit MetricsText(const std::string& text);
  /// Sum of every sample of `name`.
  double sum(const std::string& name) const;
  /// The samples of `name`, in order.
  std::vector<Sample> of(const std::string& name) const;
  bool empty() const { return samples_.empty(); }

 private:
  std::vector<Sample> samples_;
};

/// GET http://HOST:PORT/metrics (numeric IPv4 or a name that resolves);
/// nullopt and *why after `timeout_ms` or on any failure (connection
/// refused, a status other than 200).
std::optional<MetricsText> scrape_metrics(const std::string& host_port, int timeout_ms,
                                          std::string* why);

}  // namespace zipper::loadgen
