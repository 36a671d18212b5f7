// What the verbs links on one RDMA device share within a process: one
// protection domain (PD), one MR cache, and the shared receive queue (SRQ)
// that links use once a device carries more of them than
// ZIPPER_VERBS_SRQ_THRESHOLD.
//
// One PD per device means one registration serves every QP on it: zipperd
// relaying between two links on the same device sends a chunk from the
// registration it was received into; with one device per subnet (the usual
// dual-HCA bridge node) each device registers it once in its own PD, and
// nothing is copied either way.
//
// Long-lived regions (memory_regions.h, zipperd's payload pools) are
// registered once per device, whole, when the first payload inside one needs
// a registration on that device (zero copy, RDMA WRITE source or
// destination); every later payload inside it costs no ibv_reg_mr at all.
// Regions only ever copied (small frames) are never registered.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "../payload.h"
#include "config.h"
#include "mr_cache.h"
#include "raii.h"
#include "srq.h"

namespace zipper::proto::verbs {

/// A registration a work request uses: keys plus whatever keeps the MR alive
/// until the WR has completed (a long-lived region's MR, an MR-cache handle
/// or an MR for this use only). Empty when registration failed.
struct HeldRegistration {
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  std::shared_ptr<const void> keep;
  explicit operator bool() const { return keep != nullptr; }
};

/// What a registration allows.
enum class Access : std::uint8_t {
  kLocal,        // sent from (SEND, RDMA WRITE source)
  kRemoteWrite,  // written by the peer (RDMA WRITE destination)
};

class DeviceContext {
 public:
  /// The context of the device `ctx` belongs to (rdma_cm opens each device
  /// once per process), created on first use and kept while a link holds
  /// it. Throws std::runtime_error when the PD cannot be allocated.
  static std::shared_ptr<DeviceContext> of(ibv_context* ctx);

  explicit DeviceContext(ibv_context* ctx);  // use of()
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  ibv_pd* pd() const { return pd_.get(); }

  /// Registration covering p.bytes, cheapest first: the MR of the long-lived
  /// region p lies in (no ibv_reg_mr; any access); else, for kLocal and a
  /// payload with an owner, the MR cache's registration of p.extent (p.bytes
  /// when empty), so the chunks of one message share one MR; else, when
  /// `one_off`, an MR for this use only (kRemoteWrite: always, so that the
  /// peer cannot write into the memory once it is reused). Empty with *why
  /// otherwise (no owner and not one_off, or ibv_reg_mr failed). Thread-safe.
  HeldRegistration registration_for(const Payload& p, Access access, bool one_off,
                                    std::string* why);

  /// A link on this device is being created. Returns the SRQ it must use, or
  /// nullptr when it keeps its own receive queue: the SRQ is used once more
  /// than cfg.srq_threshold links are attached (0: always), and grows by
  /// cfg.srq_credits buffers for the new link. Pair with detach().
  std::shared_ptr<SharedRecvQueue> attach(const Config& cfg, std::string* note);
  /// The link attached with `srq` (may be null) and `credits` is gone.
  void detach(const std::shared_ptr<SharedRecvQueue>& srq, std::uint32_t credits);

 private:
  /// The MR of region `r` on this device, registered on first use; null when
  /// that registration failed. Forgets withdrawn regions. With mu_ held.
  const ibv_mr* region_mr_locked(const LongLivedRegion& r);

  ibv_context* ctx_;
  PdPtr pd_;
  mutable std::mutex mu_;
  std::optional<MrCache> mr_cache_;
  // By LongLivedRegion::id; null: registration failed, not retried.
  std::map<std::uint64_t, std::shared_ptr<ibv_mr>> region_mrs_;
  std::uint64_t regions_seen_ = 0;  // regions generation when withdrawn ones were last dropped
  std::shared_ptr<SharedRecvQueue> srq_;  // created on the first link above the threshold
  std::uint32_t links_ = 0;
};

}  // namespace zipper::proto::verbs
