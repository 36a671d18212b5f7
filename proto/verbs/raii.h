// RAII owners for every verbs / RDMA CM object the verbs link creates. Each
// releases its object in the destructor; moving transfers ownership.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <memory>

#include "../memory_regions.h"

namespace zipper::proto::verbs {

struct EventChannelDeleter {
  void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct CompChannelDeleter {
  void operator()(ibv_comp_channel* c) const { ibv_destroy_comp_channel(c); }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct SrqDeleter {
  void operator()(ibv_srq* srq) const { ibv_destroy_srq(srq); }
};

using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDeleter>;
using PdPtr = std::unique_ptr<ibv_pd, PdDeleter>;
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using CqPtr = std::unique_ptr<ibv_cq, CqDeleter>;
using MrPtr = std::unique_ptr<ibv_mr, MrDeleter>;
using SrqPtr = std::unique_ptr<ibv_srq, SrqDeleter>;

/// ibv_reg_mr, counted in proto::memory_registrations(): every MR of the
/// process is made here. Null (errno set) on failure.
inline MrPtr register_mr(ibv_pd* pd, void* addr, std::size_t len, int access) {
  count_memory_registration();
  return MrPtr(ibv_reg_mr(pd, addr, len, access));
}

/// The QP of a cm_id (rdma_create_qp); destroyed with rdma_destroy_qp before
/// the id itself goes.
class QpGuard {
 public:
  QpGuard() = default;
  explicit QpGuard(rdma_cm_id* id) : id_(id) {}
  QpGuard(QpGuard&& o) noexcept : id_(o.id_) { o.id_ = nullptr; }
  QpGuard& operator=(QpGuard&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = nullptr;
    }
    return *this;
  }
  ~QpGuard() { reset(); }
  void reset() {
    if (id_ != nullptr && id_->qp != nullptr) rdma_destroy_qp(id_);
    id_ = nullptr;
  }
  ibv_qp* get() const { return id_ != nullptr ? id_->qp : nullptr; }

 private:
  rdma_cm_id* id_ = nullptr;
};

/// Page-aligned heap memory (registered as one MR by its user).
struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte[], AlignedFree>;

}  // namespace zipper::proto::verbs
