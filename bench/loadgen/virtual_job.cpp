#include "virtual_job.h"

#include <cstdio>

#include "virtual_rank.h"

namespace zipper::loadgen {

VirtualJob::VirtualJob(const JobPlan& plan, std::size_t index, const Options& o)
    : plan_(plan),
      index_(index),
      table_(plan.spec->pattern, plan.spec->layout.x, plan.spec->layout.y, plan.spec->degree) {
  config_.job_id = plan.id;
  config_.job_secret = plan.secret;
  // Two sites (the low and high group); each rank's Channel gets its own site.
  config_.site_ranks = {static_cast<std::uint32_t>(plan.spec->layout.x),
                        static_cast<std::uint32_t>(plan.spec->layout.y)};
  // Messages go out as single EAGER frames: the limit is zipperd's largest
  // payload, which HELLO_ACK brings.
  config_.eager_limit = ~std::uint64_t{0};
  config_.connect_timeout_s = o.timeout_s;
  config_.pins.strict = true;
  for (const auto& z : o.zipperds) {
    config_.pins.by_index.push_back(z.key);
    low_.push_back(z.low);
    high_.push_back(z.high);
  }
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(plan.id));
  name_ = "job " + plan.spec->name + "#" + std::to_string(index) + " (id " + id + ")";
}

VirtualJob::~VirtualJob() = default;

}  // namespace zipper::loadgen
