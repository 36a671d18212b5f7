#include "device.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netdb.h>

#include <cstring>
#include <stdexcept>

namespace zipper::proto::verbs {

int rdma_device_count() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return 0;
  ibv_free_device_list(list);
  return n;
}

void require_rdma_device(const Endpoint& ep) {
  if (rdma_device_count() > 0) return;
  throw std::runtime_error("link " + ep.to_string() +
                           ": the verbs link is not available here: no RDMA device found "
                           "(libibverbs lists no HCA "
                           "or soft-RoCE device, "
                           "/sys/class/infiniband is empty); load the HCA driver or add an rxe "
                           "device "
                           "('rdma link add rxe0 type rxe netdev IF'), or use a tcp: address");
}

std::string ipv4_text(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return buf;
}

sockaddr_in pick_source(const sockaddr_in& dst, const std::string& override) {
  sockaddr_in src{};
  src.sin_family = AF_UNSPEC;
  if (!override.empty()) {
    src.sin_family = AF_INET;
    if (inet_pton(AF_INET, override.c_str(), &src.sin_addr) != 1)
      throw std::invalid_argument("ZIPPER_VERBS_SOURCE='" + override + "' is not an IPv4 address");
    return src;
  }
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return src;
  for (ifaddrs* i = ifs; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_netmask == nullptr || i->ifa_addr->sa_family != AF_INET)
      continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    const auto* m = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask);
    if (a->sin_addr.s_addr == dst.sin_addr.s_addr) continue;
    if ((a->sin_addr.s_addr & m->sin_addr.s_addr) != (dst.sin_addr.s_addr & m->sin_addr.s_addr))
      continue;
    src = *a;
    src.sin_port = 0;
    break;
  }
  freeifaddrs(ifs);
  return src;
}

std::string wc_error_text(const char* what, const ibv_wc& wc) {
  return std::string(what) + " WC error: " + ibv_wc_status_str(wc.status) + " (vendor error " +
         std::to_string(wc.vendor_err) + ") on QP " + std::to_string(wc.qp_num);
}

}  // namespace zipper::proto::verbs
