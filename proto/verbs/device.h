// RDMA device discovery and address helpers for the verbs link.
#pragma once

#include <netinet/in.h>

#include <string>

#include "../link.h"

struct ibv_wc;

namespace zipper::proto::verbs {

/// Number of RDMA devices (HCAs, soft-RoCE) libibverbs sees.
int rdma_device_count();

/// Throws std::runtime_error naming the missing RDMA device when this host
/// has none: the verbs link never falls back to TCP silently.
void require_rdma_device(const Endpoint& ep);

/// Source address for an RDMA CM connect to `dst`: `override` when set, else
/// the local IPv4 address (other than dst itself) on an interface whose subnet
/// contains dst. Binding a source matters on dual-homed nodes: without it
/// address resolution may go through lo and pick the wrong device. Returns
/// sin_family == AF_UNSPEC when there is no such address (let the kernel pick).
sockaddr_in pick_source(const sockaddr_in& dst, const std::string& override);

std::string ipv4_text(const sockaddr_in& a);

/// "send WC error: <status> (vendor error N) on QP n".
std::string wc_error_text(const char* what, const ibv_wc& wc);

}  // namespace zipper::proto::verbs
