#include "zipperd_spec.h"

#include <fstream>
#include <stdexcept>

#include "../../proto/host_key.h"
#include "spec_text.h"

namespace zipper::loadgen {

ZipperdSpec parse_zipperd_spec(std::string_view text) {
  const SpecText s("--zipperd", text, {"low", "high", "key", "pid", "metrics"});
  ZipperdSpec z;
  z.low = s.str("low", "");
  z.high = s.str("high", "");
  if (z.low.empty() || z.high.empty() || !s.has("key"))
    throw std::invalid_argument("--zipperd: low=ADDR, high=ADDR and key=HEX|@PATH are required");
  std::string why;
  for (const auto& a : {z.low, z.high})
    if (!proto::parse_endpoint(a, &why))
      throw std::invalid_argument("--zipperd: address '" + a + "': " + why);
  std::string key = s.str("key", "");
  if (key.front() == '@') {
    std::ifstream f(key.substr(1));
    std::string hex;
    if (!(f >> hex))
      throw std::invalid_argument("--zipperd: cannot read a key from " + key.substr(1));
    key = hex;
  }
  const auto k = proto::auth::parse_public_key(key, &why);
  if (!k) throw std::invalid_argument("--zipperd: key: " + why);
  z.key = *k;
  z.pid = static_cast<pid_t>(s.integer("pid", 0, 0, 1u << 30));
  z.metrics = s.str("metrics", "");
  return z;
}

}  // namespace zipper::loadgen
