#include "device_context.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

namespace zipper::proto::verbs {
namespace {

std::mutex g_registry_mu;
std::map<ibv_context*, std::weak_ptr<DeviceContext>> g_registry;

Registrar make_registrar(ibv_pd* pd) {
  Registrar r;
  r.reg = [pd](void* addr, std::size_t len, std::string* why) {
    // Local access only: cached registrations outlive the frame, and one that
    // allowed remote writes would let the peer write into reused memory.
    ibv_mr* mr = ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr) {
      *why = std::string("ibv_reg_mr: ") + std::strerror(errno);
      return Registration{};
    }
    return Registration{mr->lkey, mr->rkey, mr};
  };
  r.dereg = [](const Registration& reg) { ibv_dereg_mr(static_cast<ibv_mr*>(reg.handle)); };
  return r;
}

}  // namespace

std::shared_ptr<DeviceContext> DeviceContext::of(ibv_context* ctx) {
  std::lock_guard lk(g_registry_mu);
  auto& slot = g_registry[ctx];
  if (auto dev = slot.lock()) return dev;
  auto dev = std::make_shared<DeviceContext>(ctx);
  slot = dev;
  return dev;
}

DeviceContext::DeviceContext(ibv_context* ctx) : ctx_(ctx) {
  pd_.reset(ibv_alloc_pd(ctx));
  if (!pd_)
    throw std::runtime_error(std::string("ibv_alloc_pd on ") + ibv_get_device_name(ctx->device) +
                             ": " + std::strerror(errno));
  mr_cache_.emplace(make_registrar(pd_.get()), MrCache::Limits{});
}

DeviceContext::~DeviceContext() {
  // Cached MRs and the SRQ before the PD they belong to.
  mr_cache_.reset();
  srq_.reset();
}

MrCache::Handle DeviceContext::cached_registration(void* addr, std::size_t len,
                                                   const std::shared_ptr<void>& owner,
                                                   std::string* why) {
  std::lock_guard lk(mu_);
  return mr_cache_->get(addr, len, owner, why);
}

std::shared_ptr<SharedRecvQueue> DeviceContext::attach(const Config& cfg, std::string* note) {
  std::lock_guard lk(mu_);
  ++links_;
  if (links_ <= cfg.srq_threshold) return nullptr;
  try {
    if (!srq_) {
      ibv_device_attr da{};
      std::uint32_t max_wr = cfg.srq_max_wr;
      if (ibv_query_device(ctx_, &da) == 0 && da.max_srq_wr > 0)
        max_wr = std::min<std::uint32_t>(max_wr, static_cast<std::uint32_t>(da.max_srq_wr));
      srq_ = std::make_shared<SharedRecvQueue>(pd_.get(), cfg.buffer_size, max_wr);
    }
    if (srq_->buffer_size() != cfg.buffer_size) {
      *note = "SRQ buffers are " + std::to_string(srq_->buffer_size()) +
              " bytes, this link wants " + std::to_string(cfg.buffer_size);
      return nullptr;
    }
    if (!srq_->add_credits(cfg.srq_credits, note)) return nullptr;
    return srq_;
  } catch (const std::exception& e) {
    *note = e.what();
    return nullptr;
  }
}

void DeviceContext::detach(const std::shared_ptr<SharedRecvQueue>& srq, std::uint32_t credits) {
  std::lock_guard lk(mu_);
  if (links_ > 0) --links_;
  if (srq) srq->remove_credits(credits);
}

}  // namespace zipper::proto::verbs
