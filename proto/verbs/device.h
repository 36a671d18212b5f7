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

/// True when libibverbs lists a device of this name (e.g. mlx5_0, rxe0).
bool is_rdma_device(const std::string& name);

/// The IPv4 address RDMA CM reaches port `port` (1-based) of device `dev`
/// by: the first IPv4-mapped entry of the port's GID table (RoCE), else
/// the address of the port's IPoIB interface. sin_port is 0. Throws
/// std::runtime_error naming the device, the port and what is missing.
sockaddr_in device_port_ipv4(const std::string& dev, int port);

/// "send WC error: <status> (vendor error N) on QP n".
std::string wc_error_text(const char* what, const ibv_wc& wc);

}  // namespace zipper::proto::verbs
