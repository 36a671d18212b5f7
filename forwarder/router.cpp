// Routing: a frame's destination inside the sender's job (router.h).
#include "router.h"

#include "job_registry.h"

namespace zipper::forwarder {

using proto::FrameType;

bool is_data_frame(FrameType t) {
  return t == FrameType::kEager || t == FrameType::kRts || t == FrameType::kCts ||
         t == FrameType::kChunk;
}

std::shared_ptr<Connection> route(Connection& from, std::uint32_t vrank) {
  if (vrank == from.last_dest_rank)
    if (auto d = from.last_dest.lock(); d && !d->closed.load(std::memory_order_relaxed)) return d;
  // The site first: a rank outside every site of the job has no route.
  if (from.job->site_of(vrank) < 0) return nullptr;
  auto d = from.job->lookup(vrank);
  from.last_dest = d;
  from.last_dest_rank = vrank;
  return d;
}

}  // namespace zipper::forwarder
