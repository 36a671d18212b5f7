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
    ibv_mr* mr = register_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE).release();
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
  // Cached and region MRs and the SRQ before the PD they belong to (a link
  // holding an MR holds this context too, so none is in use here).
  mr_cache_.reset();
  region_mrs_.clear();
  srq_.reset();
}

const ibv_mr* DeviceContext::region_mr_locked(const LongLivedRegion& r) {
  // Forget regions withdrawn since the last look (their MRs go once no WR
  // holds them any more).
  if (const std::uint64_t gen = long_lived_regions_generation(); gen != regions_seen_) {
    regions_seen_ = gen;
    std::map<std::uint64_t, std::shared_ptr<ibv_mr>> live;
    for (const LongLivedRegion& l : long_lived_regions())
      if (auto it = region_mrs_.find(l.id); it != region_mrs_.end())
        live.emplace(l.id, std::move(it->second));
    region_mrs_ = std::move(live);
  }
  auto it = region_mrs_.find(r.id);
  if (it != region_mrs_.end()) return it->second.get();  // null: registration failed before
  // First payload of this region on this device: register the whole region,
  // once. Remote write too: its buffers are RDMA WRITE destinations.
  MrPtr mr =
      register_mr(pd_.get(), r.addr, r.bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  // On failure (e.g. RLIMIT_MEMLOCK) remember it: the region's payloads take
  // the per-payload paths instead of retrying for every frame.
  auto& slot = region_mrs_[r.id];
  slot = mr ? std::shared_ptr<ibv_mr>(mr.release(), MrDeleter{}) : nullptr;
  return slot.get();
}

HeldRegistration DeviceContext::registration_for(const Payload& p, Access access, bool one_off,
                                                 std::string* why) {
  std::byte* const addr = p.bytes.data();
  const std::size_t len = p.bytes.size();
  {
    std::lock_guard lk(mu_);
    LongLivedRegion region;
    if (find_long_lived_region(addr, len, &region) && region_mr_locked(region) != nullptr) {
      const auto& mr = region_mrs_.at(region.id);
      return {mr->lkey, mr->rkey, mr};
    }
    if (access == Access::kLocal && p.owner) {
      const bool extent = !p.extent.empty() && p.extent.data() <= addr &&
                          addr + len <= p.extent.data() + p.extent.size();
      auto h = extent ? mr_cache_->get(p.extent.data(), p.extent.size(), p.owner, why)
                      : mr_cache_->get(addr, len, p.owner, why);
      if (h) return {h->lkey, h->rkey, h};
    }
  }
  if (!one_off) {
    if (why->empty()) *why = "memory without an owner is not registered for long";
    return {};
  }
  // Memory whose lifetime the link cannot see, or an RDMA WRITE destination
  // (remote access must end with the frame): registered for this use only.
  MrPtr mr = register_mr(
      pd_.get(), addr, len,
      IBV_ACCESS_LOCAL_WRITE | (access == Access::kRemoteWrite ? IBV_ACCESS_REMOTE_WRITE : 0));
  if (!mr) {
    *why = std::string("ibv_reg_mr: ") + std::strerror(errno);
    return {};
  }
  std::shared_ptr<ibv_mr> keep(mr.release(), MrDeleter{});
  return {keep->lkey, keep->rkey, keep};
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
