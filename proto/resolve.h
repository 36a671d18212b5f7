// Address resolution shared by the link backends.
#pragma once

#include <netinet/in.h>

#include "link.h"

namespace zipper::proto {

/// IPv4 address of ep.host (numeric or a name) with ep.port. Throws
/// std::runtime_error naming the host when it cannot be resolved.
sockaddr_in resolve_ipv4(const Endpoint& ep);

}  // namespace zipper::proto
