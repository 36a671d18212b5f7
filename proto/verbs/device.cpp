#include "device.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netdb.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
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
      throw std::invalid_argument("verbs source address '" + override + "' is not an IPv4 address");
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

bool is_rdma_device(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return false;
  bool found = false;
  for (int i = 0; i < n && !found; ++i) found = name == ibv_get_device_name(list[i]);
  ibv_free_device_list(list);
  return found;
}

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string real_path(const std::string& p) {
  std::error_code ec;
  auto r = std::filesystem::canonical(p, ec);
  return ec ? std::string() : r.string();
}

/// IPv4 address of the IPoIB interface of `dev` port `port`, if any.
std::optional<sockaddr_in> ipoib_ipv4(const std::string& dev, int port) {
  const std::string hca = real_path("/sys/class/infiniband/" + dev + "/device");
  if (hca.empty()) return std::nullopt;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    const std::string net = e.path().string();
    if (real_path(net + "/device") != hca) continue;
    if (read_first_line(net + "/type") != "32") continue;  // ARPHRD_INFINIBAND
    // dev_port counts the HCA's ports from 0 (older kernels: dev_id, hex).
    const std::string dp = read_first_line(net + "/dev_port");
    if (!dp.empty() && std::atoi(dp.c_str()) != port - 1) continue;
    ifaddrs* ifs = nullptr;
    if (getifaddrs(&ifs) != 0) return std::nullopt;
    std::optional<sockaddr_in> out;
    for (ifaddrs* i = ifs; i != nullptr && !out; i = i->ifa_next)
      if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET &&
          e.path().filename().string() == i->ifa_name)
        out = *reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    freeifaddrs(ifs);
    if (out) return out;
  }
  return std::nullopt;
}

}  // namespace

sockaddr_in device_port_ipv4(const std::string& dev, int port) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_device* d = nullptr;
  for (int i = 0; list != nullptr && i < n && d == nullptr; ++i)
    if (dev == ibv_get_device_name(list[i])) d = list[i];
  ibv_context* ctx = d != nullptr ? ibv_open_device(d) : nullptr;
  if (list != nullptr) ibv_free_device_list(list);
  if (ctx == nullptr)
    throw std::runtime_error("RDMA device '" + dev + "' " +
                             (d == nullptr ? "not found ('rdma link' lists the devices)"
                                           : "cannot be opened: " + std::string(strerror(errno))));
  struct Close {
    ibv_context* c;
    ~Close() { ibv_close_device(c); }
  } close{ctx};
  ibv_device_attr da{};
  if (ibv_query_device(ctx, &da) != 0)
    throw std::runtime_error("ibv_query_device(" + dev + "): " + strerror(errno));
  if (port < 1 || port > da.phys_port_cnt)
    throw std::runtime_error("RDMA device " + dev + " has no port " + std::to_string(port) + " (" +
                             std::to_string(da.phys_port_cnt) + " port(s), numbered from 1)");
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, static_cast<std::uint8_t>(port), &pa) != 0)
    throw std::runtime_error("ibv_query_port(" + dev + ", " + std::to_string(port) +
                             "): " + strerror(errno));
  for (int i = 0; i < pa.gid_tbl_len; ++i) {
    ibv_gid gid{};
    if (ibv_query_gid(ctx, static_cast<std::uint8_t>(port), i, &gid) != 0) continue;
    // IPv4-mapped IPv6 (::ffff:a.b.c.d): a RoCE GID derived from an IPv4 address.
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(gid.raw, kMapped, sizeof kMapped) != 0) continue;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    std::memcpy(&a.sin_addr, gid.raw + 12, 4);
    return a;
  }
  if (auto a = ipoib_ipv4(dev, port)) {
    a->sin_port = 0;
    return *a;
  }
  throw std::runtime_error("port " + std::to_string(port) + " of RDMA device " + dev +
                           " has no IPv4 address (no IPv4 GID, no IPoIB interface with an "
                           "address); RDMA CM needs one: give its netdev an IPv4 address, or "
                           "listen on verbs:IP:PORT");
}

std::string wc_error_text(const char* what, const ibv_wc& wc) {
  return std::string(what) + " WC error: " + ibv_wc_status_str(wc.status) + " (vendor error " +
         std::to_string(wc.vendor_err) + ") on QP " + std::to_string(wc.qp_num);
}

}  // namespace zipper::proto::verbs
