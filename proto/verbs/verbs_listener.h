// RDMA CM listener and active connect for the verbs link.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../link.h"
#include "config.h"
#include "raii.h"

namespace zipper::proto::verbs {

/// Listens with RDMA CM on HOST:PORT (HOST must be an address of an RDMA
/// device's port: a RoCE netdev or IPoIB address). poll_fd() is the CM event
/// channel; accept() answers one connect request with a ready VerbsLink.
class VerbsListener final : public Listener {
 public:
  /// Throws std::runtime_error naming the missing RDMA device, an address not
  /// on any RDMA device, or a bind failure. Accepted links use `cfg`.
  VerbsListener(const Endpoint& ep, const Config& cfg);
  ~VerbsListener() override;
  int poll_fd() const override;
  std::unique_ptr<Link> accept() override;
  std::string address() const override { return address_; }
  std::vector<std::string> take_refused() override { return std::exchange(refused_, {}); }

 private:
  std::vector<std::string> refused_;
  Config cfg_;
  EventChannelPtr channel_;
  CmIdPtr id_;
  std::string address_;
};

/// Connects to a VerbsListener (rdma_resolve_addr from a bound source address,
/// rdma_resolve_route, rdma_connect), retrying plain rejects (nobody listening
/// yet) and unreachable peers until `timeout_ms` elapses. `hello` (may be
/// null) travels in the connect request's private data. Throws
/// std::runtime_error with the last reason, at once when zipperd refused the
/// connect with a reason (e.g. a malformed hello). The link uses `cfg`.
std::unique_ptr<Link> verbs_connect(const Endpoint& ep, int timeout_ms, const ConnectHello* hello,
                                    const Config& cfg);

}  // namespace zipper::proto::verbs
