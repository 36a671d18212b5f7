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
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "config.h"
#include "mr_cache.h"
#include "raii.h"
#include "srq.h"

namespace zipper::proto::verbs {

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

  /// MR-cache registration (local access) of memory kept alive by `owner`;
  /// see MrCache::get. Thread-safe.
  MrCache::Handle cached_registration(void* addr, std::size_t len,
                                      const std::shared_ptr<void>& owner, std::string* why);

  /// A link on this device is being created. Returns the SRQ it must use, or
  /// nullptr when it keeps its own receive queue: the SRQ is used once more
  /// than cfg.srq_threshold links are attached (0: always), and grows by
  /// cfg.srq_credits buffers for the new link. Pair with detach().
  std::shared_ptr<SharedRecvQueue> attach(const Config& cfg, std::string* note);
  /// The link attached with `srq` (may be null) and `credits` is gone.
  void detach(const std::shared_ptr<SharedRecvQueue>& srq, std::uint32_t credits);

 private:
  ibv_context* ctx_;
  PdPtr pd_;
  mutable std::mutex mu_;
  std::optional<MrCache> mr_cache_;
  std::shared_ptr<SharedRecvQueue> srq_;  // created on the first link above the threshold
  std::uint32_t links_ = 0;
};

}  // namespace zipper::proto::verbs
