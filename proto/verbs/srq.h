// Shared receive queue (SRQ) of one RDMA device: the receive buffers that the
// links attached to it share, instead of each QP pre-posting its own.
//
// No receiver-not-ready by design, as with per-QP receive queues: every
// attached link grants its peer a fixed number of credits (one credit = one
// receive the peer may consume, credits.h), and the SRQ always has at least as
// many buffers in circulation (posted, or consumed and not yet reposted by the
// link that received them) as the attached links granted credits in total.
// The pool grows when a link attaches and keeps its peak size (buffers are
// recycled, never freed before the SRQ goes).
//
// Thread-safe: links on different threads repost into it.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "raii.h"

namespace zipper::proto::verbs {

class SharedRecvQueue {
 public:
  /// Creates the SRQ on `pd` (ibv_create_srq) for buffers of `buffer_size`
  /// bytes, at most `max_wr` of them. Throws std::runtime_error on failure.
  SharedRecvQueue(ibv_pd* pd, std::uint32_t buffer_size, std::uint32_t max_wr);
  ~SharedRecvQueue();
  SharedRecvQueue(const SharedRecvQueue&) = delete;
  SharedRecvQueue& operator=(const SharedRecvQueue&) = delete;

  ibv_srq* get() const { return srq_.get(); }
  std::uint32_t buffer_size() const { return buffer_size_; }

  /// A link attaches and grants its peer `credits` receives: posts buffers
  /// (allocating and registering more when needed) until the pool covers every
  /// credit granted. False with *why when the SRQ cannot hold that many
  /// (the link then keeps its own receive queue).
  bool add_credits(std::uint32_t credits, std::string* why);
  /// A link detached; its buffers stay in the pool for the others.
  void remove_credits(std::uint32_t credits);

  /// The buffer a receive WC's wr_id names.
  std::byte* buffer(std::uint64_t wr_id);
  /// Posts a consumed buffer again. False with *why when ibv_post_srq_recv fails.
  bool repost(std::uint64_t wr_id, std::string* why);

 private:
  struct Block {
    AlignedBytes mem;
    MrPtr mr;
    std::uint32_t count = 0;
  };
  bool post_locked(std::uint64_t wr_id, std::string* why);
  std::byte* buffer_locked(std::uint64_t wr_id);

  ibv_pd* pd_;
  std::uint32_t buffer_size_;
  std::uint32_t max_wr_;
  SrqPtr srq_;
  mutable std::mutex mu_;
  std::deque<Block> blocks_;  // wr_id = block index << 32 | slot
  std::size_t allocated_ = 0;
  std::uint64_t credits_ = 0;
};

}  // namespace zipper::proto::verbs
