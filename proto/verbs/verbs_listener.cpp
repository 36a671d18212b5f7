#include "verbs_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "../resolve.h"
#include "device.h"
#include "verbs_link.h"
#include "wire.h"

namespace zipper::proto::verbs {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

EventChannelPtr make_channel() {
  EventChannelPtr ch(rdma_create_event_channel());
  if (!ch) throw std::runtime_error(errno_text("rdma_create_event_channel"));
  const int flags = fcntl(ch->fd, F_GETFL, 0);
  fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
  return ch;
}

/// Peer's private data, validated: nullopt (and *why) when it is not a
/// zipper verbs peer, its hello is malformed, or its buffers are too small
/// for the protocol.
std::optional<ConnParams> peer_params(const rdma_conn_param& p, std::string* why) {
  auto params = decode_params(p.private_data, p.private_data_len, why);
  if (params && (params->recv_buffers < kMinBuffers || params->buffer_size < 4096)) {
    *why = "the peer offers " + std::to_string(params->recv_buffers) + " receive buffers of " +
           std::to_string(params->buffer_size) + " bytes (at least " + std::to_string(kMinBuffers) +
           " of 4096 needed)";
    return std::nullopt;
  }
  return params;
}

/// Bounds how long a send to a dead peer retries (rdma_cm's RoCE default is
/// several seconds per try).
void set_ack_timeout(rdma_cm_id* id, const Config& cfg) {
  std::uint8_t t = cfg.ack_timeout;
  rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t);
}

rdma_conn_param conn_param(const std::array<std::byte, kConnParamsSize>& pd) {
  static_assert(kConnParamsSize <= 56, "RDMA CM connect private data holds 56 bytes");
  rdma_conn_param p{};
  p.private_data = pd.data();
  p.private_data_len = static_cast<std::uint8_t>(pd.size());
  p.responder_resources = 1;
  p.initiator_depth = 1;
  p.retry_count = 7;      // transport retries before a send fails (dead peer)
  p.rnr_retry_count = 0;  // receiver-not-ready cannot happen (credits); surface it if it does
  return p;
}

/// Next CM event on `ch` before `deadline`, or nullptr on timeout. Throws on
/// channel errors.
rdma_cm_event* wait_event(rdma_event_channel* ch, Clock::time_point deadline) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) return ev;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      throw std::runtime_error(errno_text("rdma_get_cm_event"));
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return nullptr;
    pollfd p{ch->fd, POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
  }
}

/// Where to listen: HOST:PORT is an IPv4 address (or name) and RDMA CM port;
/// DEVICE:PORT an HCA port, reached at its IPv4 address on kDefaultVerbsPort;
/// DEVICE:PORT:CMPORT the same on port CMPORT. *device names the device
/// when one was given.
sockaddr_in listen_address(const Endpoint& ep, std::string* device) {
  const auto colon = ep.host.find(':');
  std::string dev = ep.host, hca_port;
  std::uint16_t cm_port = kDefaultVerbsPort;
  if (colon != std::string::npos) {  // DEVICE:PORT:CMPORT
    dev = ep.host.substr(0, colon);
    hca_port = ep.host.substr(colon + 1);
    cm_port = ep.port;
  } else if (is_rdma_device(ep.host)) {  // DEVICE:PORT
    hca_port = std::to_string(ep.port);
  } else {
    return resolve_ipv4(ep);
  }
  int port = 0;
  const auto [p, ec] = std::from_chars(hca_port.data(), hca_port.data() + hca_port.size(), port);
  if (ec != std::errc() || p != hca_port.data() + hca_port.size() || port < 1 || port > 255)
    throw std::runtime_error("cannot listen on " + ep.to_string() + ": bad HCA port '" + hca_port +
                             "' (want verbs:DEVICE:PORT[:CMPORT], ports from 1)");
  sockaddr_in a{};
  try {
    a = device_port_ipv4(dev, port);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot listen on " + ep.to_string() + ": " + e.what());
  }
  a.sin_port = htons(cm_port);
  *device = dev + " port " + std::to_string(port);
  return a;
}

}  // namespace

// ---------------------------------------------------------------- listener

VerbsListener::VerbsListener(const Endpoint& ep, const Config& cfg) : cfg_(cfg) {
  require_rdma_device(ep);
  std::string by_device;
  sockaddr_in a = listen_address(ep, &by_device);
  channel_ = make_channel();
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0)
    throw std::runtime_error(errno_text("rdma_create_id"));
  id_.reset(id);
  if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&a)) != 0) {
    const int err = errno;
    if (err == ENODEV || err == EADDRNOTAVAIL)
      throw std::runtime_error("cannot listen on " + ep.to_string() +
                               ": no RDMA device has address " + ipv4_text(a) +
                               " (rdma_bind_addr: " + std::strerror(err) +
                               "); 'rdma link' lists the devices and their netdevs");
    throw std::runtime_error("cannot listen on " + ep.to_string() +
                             ": rdma_bind_addr: " + std::strerror(err));
  }
  if (a.sin_addr.s_addr != 0 && id->verbs == nullptr)
    throw std::runtime_error("cannot listen on " + ep.to_string() +
                             ": no RDMA device has address " + ipv4_text(a));
  if (rdma_listen(id, 512) != 0)
    throw std::runtime_error("cannot listen on " + ep.to_string() + ": " +
                             errno_text("rdma_listen"));
  const std::string dev = id->verbs != nullptr ? ibv_get_device_name(id->verbs->device) : "any";
  address_ = "verbs:" + ipv4_text(a) + ":" + std::to_string(ntohs(rdma_get_src_port(id))) +
             " (device " + dev + ", port " + std::to_string(id->port_num) +
             (by_device.empty() ? "" : "; from " + ep.to_string()) + ")";
}

VerbsListener::~VerbsListener() = default;

int VerbsListener::poll_fd() const { return channel_->fd; }

std::unique_ptr<Link> VerbsListener::accept() {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(channel_.get(), &ev) != 0) return nullptr;  // nothing pending
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
      rdma_ack_cm_event(ev);  // events of ids not yet migrated to their link: nothing to do
      continue;
    }
    CmIdPtr id(ev->id);
    std::string why;
    const auto params = peer_params(ev->param.conn, &why);
    const sockaddr* peer_sa = rdma_get_peer_addr(id.get());
    std::string peer = "verbs:?";
    if (peer_sa != nullptr && peer_sa->sa_family == AF_INET) {
      const auto* s = reinterpret_cast<const sockaddr_in*>(peer_sa);
      peer = "verbs:" + ipv4_text(*s) + ":" + std::to_string(ntohs(s->sin_port));
    }
    rdma_ack_cm_event(ev);
    if (!params) {
      // Refused before any QP resources exist; the reason travels back in
      // the reject's private data so the client reports it.
      std::size_t len = 0;
      const auto rej = encode_reject(why, &len);
      rdma_reject(id.get(), rej.data(), static_cast<std::uint8_t>(len));
      refused_.push_back(peer + ": " + why);
      continue;
    }
    try {
      EventChannelPtr ch = make_channel();
      // The link gets its own event channel, so its DISCONNECTED event wakes
      // its poll_fd.
      if (rdma_migrate_id(id.get(), ch.get()) != 0)
        throw std::runtime_error(errno_text("rdma_migrate_id"));
      auto link = std::make_unique<VerbsLink>(std::move(ch), std::move(id), cfg_, peer);
      link->start(*params);
      // Without a hello in the private data the client sends a HELLO frame.
      if (params->hello) link->set_peer_hello(*params->hello);
      const auto pd = encode_params(link->local_params());
      rdma_conn_param cp = conn_param(pd);
      set_ack_timeout(link->cm_id(), cfg_);
      if (rdma_accept(link->cm_id(), &cp) != 0) throw std::runtime_error(errno_text("rdma_accept"));
      return link;
    } catch (const std::exception&) {
      if (id) rdma_reject(id.get(), nullptr, 0);
      continue;  // resources exhausted for this one; keep serving the others
    }
  }
}

// ---------------------------------------------------------------- connect

std::unique_ptr<Link> verbs_connect(const Endpoint& ep, int timeout_ms, const ConnectHello* hello,
                                    const Config& cfg) {
  require_rdma_device(ep);
  if (ep.host.find(':') != std::string::npos || is_rdma_device(ep.host))
    throw std::runtime_error("cannot connect to " + ep.to_string() +
                             ": DEVICE:PORT names a local HCA port, which only a listener "
                             "takes; connect to zipperd's IPv4 address (zipperd logs it)");
  sockaddr_in dst = resolve_ipv4(ep);
  sockaddr_in src = pick_source(dst, cfg.source);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string via = src.sin_family == AF_INET
                              ? " from " + ipv4_text(src)
                              : std::string(" (no local source on its subnet)");
  std::string last = "timed out";
  for (;;) {
    EventChannelPtr ch = make_channel();
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(ch.get(), &raw, nullptr, RDMA_PS_TCP) != 0)
      throw std::runtime_error(errno_text("rdma_create_id"));
    CmIdPtr id(raw);
    std::unique_ptr<VerbsLink> link;
    bool retry = false;
    auto expect = [&](rdma_cm_event_type want, const char* step) -> rdma_cm_event* {
      rdma_cm_event* ev = wait_event(
          ch.get(), std::min(deadline, Clock::now() + std::chrono::milliseconds(
                                                          cfg.resolve_timeout_ms + 1000)));
      if (ev == nullptr) {
        // Keep an earlier, more telling reason (e.g. REJECTED) when only the
        // overall deadline cut this attempt short.
        if (last == "timed out" || Clock::now() < deadline) last = std::string(step) + " timed out";
        retry = true;
        return nullptr;
      }
      if (ev->event != want) {
        last = std::string(step) + ": " + rdma_event_str(ev->event) +
               (ev->event == RDMA_CM_EVENT_REJECTED ? " (nobody listens there, or the peer refused)"
                                                    : "") +
               " status " + std::to_string(ev->status);
        retry = ev->event == RDMA_CM_EVENT_REJECTED || ev->event == RDMA_CM_EVENT_UNREACHABLE ||
                ev->event == RDMA_CM_EVENT_ADDR_ERROR || ev->event == RDMA_CM_EVENT_ROUTE_ERROR ||
                ev->event == RDMA_CM_EVENT_CONNECT_ERROR;
        rdma_ack_cm_event(ev);
        return nullptr;
      }
      return ev;
    };
    if (rdma_resolve_addr(id.get(),
                          src.sin_family == AF_INET ? reinterpret_cast<sockaddr*>(&src) : nullptr,
                          reinterpret_cast<sockaddr*>(&dst), cfg.resolve_timeout_ms) != 0) {
      last = errno_text("rdma_resolve_addr");
      retry = true;
    } else if (auto* ev = expect(RDMA_CM_EVENT_ADDR_RESOLVED, "address resolution")) {
      rdma_ack_cm_event(ev);
      if (rdma_resolve_route(id.get(), cfg.resolve_timeout_ms) != 0) {
        last = errno_text("rdma_resolve_route");
        retry = true;
      } else if (auto* ev2 = expect(RDMA_CM_EVENT_ROUTE_RESOLVED, "route resolution")) {
        rdma_ack_cm_event(ev2);
        rdma_cm_id* idp = id.get();
        link = std::make_unique<VerbsLink>(std::move(ch), std::move(id), cfg, ep.to_string());
        const auto pd = encode_params(link->local_params(hello));
        rdma_conn_param cp = conn_param(pd);
        set_ack_timeout(idp, cfg);
        if (rdma_connect(idp, &cp) != 0) {
          last = errno_text("rdma_connect");
          retry = true;
        } else {
          // The link owns the channel now; wait on it through the id.
          rdma_event_channel* lch = idp->channel;
          rdma_cm_event* ev3 = nullptr;
          for (;;) {
            ev3 = wait_event(lch, deadline);
            if (ev3 == nullptr) {
              if (last == "timed out") last = "connect timed out";
              break;
            }
            if (ev3->event == RDMA_CM_EVENT_ESTABLISHED) break;
            if (ev3->event == RDMA_CM_EVENT_REJECTED) {
              if (auto reason = decode_reject(ev3->param.conn.private_data,
                                              ev3->param.conn.private_data_len)) {
                rdma_ack_cm_event(ev3);
                throw LinkFailure(
                    {LinkErrorKind::kRefused, 0,
                     "zipperd at " + ep.to_string() + " refused the connection: " + *reason});
              }
            }
            last = std::string("connect: ") + rdma_event_str(ev3->event) +
                   (ev3->event == RDMA_CM_EVENT_REJECTED
                        ? " (nobody listens there, or the peer refused)"
                        : "") +
                   " status " + std::to_string(ev3->status);
            retry = true;
            rdma_ack_cm_event(ev3);
            ev3 = nullptr;
            break;
          }
          if (ev3 != nullptr) {
            std::string why;
            const auto params = peer_params(ev3->param.conn, &why);
            rdma_ack_cm_event(ev3);
            if (!params)
              throw std::runtime_error("cannot connect to zipperd at " + ep.to_string() + ": " +
                                       why);
            link->start(*params);
            // A hello too large for the private data goes as a HELLO frame.
            if (hello != nullptr && hello_fits(*hello)) link->set_hello_delivered();
            return link;
          }
        }
      }
    }
    link.reset();
    if (!retry || Clock::now() >= deadline) {
      // Rejected until the end: nobody listens there; retried until the
      // deadline otherwise: no answer came; else an RDMA CM failure.
      const LinkErrorKind kind = last.find("REJECTED") != std::string::npos
                                     ? LinkErrorKind::kRefused
                                 : retry ? LinkErrorKind::kTimeout
                                         : LinkErrorKind::kTransport;
      throw LinkFailure(
          {kind, 0, "cannot connect to zipperd at " + ep.to_string() + via + ": " + last});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace zipper::proto::verbs
