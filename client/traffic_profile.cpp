#include "traffic_profile.h"

namespace zipper::client {

TrafficProfile::TrafficProfile(int world_size, int self)
    : self_(self),
      engine_(static_cast<std::size_t>(world_size)),
      native_(static_cast<std::size_t>(world_size)) {}

std::vector<TrafficProfile::Row> TrafficProfile::rows() const {
  std::lock_guard<std::mutex> g(native_mu_);
  std::vector<Row> out;
  for (std::size_t w = 0; w < engine_.size(); ++w) {
    const std::uint64_t messages = engine_[w].messages + native_[w].messages;
    if (messages > 0)
      out.push_back({static_cast<int>(w), engine_[w].bytes + native_[w].bytes, messages});
  }
  return out;
}

}  // namespace zipper::client
