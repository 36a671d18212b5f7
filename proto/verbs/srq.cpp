#include "srq.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace zipper::proto::verbs {
namespace {
constexpr std::uint32_t kMinBlock = 16;  // buffers allocated (and registered) at a time
}

SharedRecvQueue::SharedRecvQueue(ibv_pd* pd, std::uint32_t buffer_size, std::uint32_t max_wr)
    : pd_(pd), buffer_size_(buffer_size), max_wr_(max_wr) {
  ibv_srq_init_attr a{};
  a.attr.max_wr = max_wr;
  a.attr.max_sge = 1;
  srq_.reset(ibv_create_srq(pd, &a));
  if (!srq_)
    throw std::runtime_error(std::string("ibv_create_srq (") + std::to_string(max_wr) +
                             " WRs): " + std::strerror(errno));
  max_wr_ = a.attr.max_wr;  // what the device granted (at least what was asked)
}

SharedRecvQueue::~SharedRecvQueue() {
  srq_.reset();  // before the MRs of the buffers it holds
}

std::byte* SharedRecvQueue::buffer_locked(std::uint64_t wr_id) {
  const std::size_t b = wr_id >> 32, slot = wr_id & 0xFFFFFFFF;
  if (b >= blocks_.size() || slot >= blocks_[b].count) return nullptr;
  return blocks_[b].mem.get() + slot * buffer_size_;
}

std::byte* SharedRecvQueue::buffer(std::uint64_t wr_id) {
  std::lock_guard lk(mu_);
  return buffer_locked(wr_id);
}

bool SharedRecvQueue::post_locked(std::uint64_t wr_id, std::string* why) {
  std::byte* p = buffer_locked(wr_id);
  if (p == nullptr) {
    *why = "SRQ: receive completion names no buffer (wr_id " + std::to_string(wr_id) + ")";
    return false;
  }
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(p), buffer_size_, blocks_[wr_id >> 32].mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (const int rc = ibv_post_srq_recv(srq_.get(), &wr, &bad); rc != 0) {
    *why = std::string("ibv_post_srq_recv: ") + std::strerror(rc);
    return false;
  }
  return true;
}

bool SharedRecvQueue::repost(std::uint64_t wr_id, std::string* why) {
  std::lock_guard lk(mu_);
  return post_locked(wr_id, why);
}

bool SharedRecvQueue::add_credits(std::uint32_t credits, std::string* why) {
  std::lock_guard lk(mu_);
  if (credits_ + credits > max_wr_) {
    *why = "SRQ full (" + std::to_string(credits_) + " of " + std::to_string(max_wr_) +
           " receives granted)";
    return false;
  }
  while (allocated_ < credits_ + credits) {
    const auto n = static_cast<std::uint32_t>(
        std::max<std::uint64_t>(kMinBlock, credits_ + credits - allocated_));
    Block blk;
    const std::size_t bytes = std::size_t{n} * buffer_size_;
    void* mem = nullptr;
    if (posix_memalign(&mem, 4096, bytes) != 0) {
      *why = "out of memory for SRQ buffers (" + std::to_string(bytes) + " bytes)";
      return false;
    }
    blk.mem.reset(static_cast<std::byte*>(mem));
    blk.mr = register_mr(pd_, mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!blk.mr) {
      *why = std::string("ibv_reg_mr (SRQ buffers): ") + std::strerror(errno);
      return false;
    }
    blk.count = n;
    blocks_.push_back(std::move(blk));
    const std::uint64_t b = blocks_.size() - 1;
    for (std::uint32_t i = 0; i < n; ++i)
      if (!post_locked(b << 32 | i, why)) return false;
    allocated_ += n;
  }
  credits_ += credits;
  return true;
}

void SharedRecvQueue::remove_credits(std::uint32_t credits) {
  std::lock_guard lk(mu_);
  credits_ -= std::min<std::uint64_t>(credits_, credits);
}

}  // namespace zipper::proto::verbs
