// Which admission zipperd runs: "secret" (proof of the job secret) or
// "munge" (also a MUNGE credential, so a tenant is a uid, not an address
// prefix: tenant_share.h). The setting "auto", zipperd's default, picks
// MUNGE where munged runs: on every listener, its socket is there and a
// credential made through it decodes again (the probe); else "secret", as
// before. libmmpi follows: a rank sends a credential when the CHALLENGE
// asks for one (client/channel.cpp).
#pragma once

#include <string>
#include <vector>

namespace zipper::forwarder {

/// What probing one listener's munged found.
struct MungeProbe {
  bool usable = false;  // socket present, and a credential made and decoded through it
  std::string why;      // when not usable: what failed (one line)
};

/// The admission a setting gives ("secret", "munge" or "auto") with the
/// listeners' probes: "munge" for "auto" only when every listener's munged
/// is usable (and there is at least one listener). Pure.
inline std::string resolve_auth(const std::string& setting, const std::vector<MungeProbe>& probes) {
  if (setting != "auto") return setting;
  if (probes.empty()) return "secret";
  for (const auto& p : probes)
    if (!p.usable) return "secret";
  return "munge";
}

/// Probes munged at `socket` (empty: libmunge's default,
/// /run/munge/munge.socket.2): the socket exists, and a credential made
/// through it decodes with the payload it was made for. Quick (no retry
/// when the socket is absent). Never throws.
MungeProbe probe_munge(const std::string& socket);

}  // namespace zipper::forwarder
