// The epoll helpers of a side's loops (side.h).
#include "side.h"

#include <unistd.h>

namespace zipper::forwarder {

void epoll_add(int ep, int fd, std::uint32_t events, std::uint64_t id) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) throw std::runtime_error("epoll_ctl(ADD) failed");
}

void wake(int efd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(efd, &one, sizeof one);
}

}  // namespace zipper::forwarder
