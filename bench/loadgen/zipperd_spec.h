// One bridge node as zipper-loadgen sees it (--zipperd, once per zipperd):
// where the low and the high group connect, the host key the ranks pin,
// and, for measuring it, its pid (/proc) and its /metrics address.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "../../proto/auth.h"

namespace zipper::loadgen {

/// --zipperd low=ADDR,high=ADDR,key=HEX|@PATH[,pid=PID][,metrics=HOST:PORT]
/// ADDR is [tcp:]HOST:PORT of zipperd's listener for that group; PATH a
/// host_key.pub (64 hex digits).
struct ZipperdSpec {
  std::string low, high;
  proto::auth::Key key{};
  pid_t pid = 0;        // 0: not measured from /proc
  std::string metrics;  // "": no /metrics (counters not checked)
};

/// Throws std::invalid_argument naming the fault.
ZipperdSpec parse_zipperd_spec(std::string_view text);

}  // namespace zipper::loadgen
