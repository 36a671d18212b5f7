// One job inside a worker: its plan, its pair table, the channel
// configuration its ranks share (job id, secret, layout, pinned host keys),
// the ranks this worker serves, and its milestones.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../../client/config.h"
#include "job_plan.h"
#include "run_stats.h"
#include "traffic_pattern.h"

namespace zipper::loadgen {

class VirtualRank;

class VirtualJob {
 public:
  /// `index`: the plan's position in the run (for messages and results).
  VirtualJob(const JobPlan& plan, std::size_t index, const Options& o);
  ~VirtualJob();
  VirtualJob(const VirtualJob&) = delete;
  VirtualJob& operator=(const VirtualJob&) = delete;

  const JobPlan& plan() const { return plan_; }
  const JobSpec& spec() const { return *plan_.spec; }
  std::size_t index() const { return index_; }
  const PairTable& table() const { return table_; }
  const client::ClientConfig& config() const { return config_; }
  /// Addresses of the k zipperds for a rank of group `high`.
  const std::vector<std::string>& addresses(bool high) const { return high ? high_ : low_; }
  /// "job <name>#<index> (id <hex>)", for messages.
  const std::string& name() const { return name_; }

  std::vector<std::unique_ptr<VirtualRank>> ranks;  // the ranks this worker serves
  JobTimes times;
  std::uint32_t ready = 0, done = 0, closed = 0;  // of `ranks`
  bool traffic_started = false, closing = false;

 private:
  const JobPlan& plan_;
  const std::size_t index_;
  PairTable table_;
  client::ClientConfig config_;
  std::vector<std::string> low_, high_;
  std::string name_;
};

}  // namespace zipper::loadgen
