// Fair shares between tenants: what one tenant may hold of zipperd's jobs
// and connections, so that a tenant at its share has its own new jobs
// refused, and another tenant's first job still finds room.
//
// A tenant is whoever zipperd can tell apart: the MUNGE uid of the job's
// first rank under --auth munge, else the address prefix it connected from
// (/24 IPv4, /64 IPv6: address_prefix.h). Without MUNGE, every user behind
// one prefix is one tenant (docs/security.md says what that means).
//
// Jobs: a tenant holds at most its cap (--max-jobs-per-user per uid with
// MUNGE, --max-jobs-per-prefix per prefix without), and the last eighth of
// --max-jobs is kept for tenants that hold no job, as the pools keep an
// eighth of every buffer class for jobs other than those at their share:
// however many small active jobs one tenant runs, a new tenant's job is
// admitted. Connections: the admitted ranks of one tenant's jobs together
// hold at most --max-job-connections-share of --max-connections (the share
// one job's layout may claim).
//
// Pure arithmetic (no locks, no clock): JobRegistry calls it under its lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace zipper::forwarder {

/// The tenant a job counts against: "uid N" with a MUNGE uid; else
/// "prefix P" (P: address_prefix of its first rank); else `owner` (a peer
/// with no IP address, e.g. a verbs peer name).
inline std::string tenant_of(const std::optional<std::uint32_t>& uid, const std::string& prefix,
                             const std::string& owner) {
  if (uid) return "uid " + std::to_string(*uid);
  if (!prefix.empty()) return "prefix " + prefix;
  return owner;
}

/// Jobs of `max_jobs` kept for tenants that hold none: an eighth, rounded
/// down (none below 8 jobs, where one tenant's second job would need it).
inline std::uint32_t job_reserve(std::uint32_t max_jobs) { return max_jobs / 8; }

enum class JobShare : std::uint8_t {
  kAdmit,
  kTenantAtCap,    // the tenant holds its cap of jobs
  kServerFull,     // every one of --max-jobs is taken
  kReserveForNew,  // only the reserve is left, and the tenant holds jobs already
};

/// May a tenant that holds `held` jobs (at most `tenant_cap`) start another
/// while `total` of `max_jobs` run?
inline JobShare job_share(std::uint32_t total, std::uint32_t max_jobs, std::uint32_t held,
                          std::uint32_t tenant_cap) {
  if (held >= tenant_cap) return JobShare::kTenantAtCap;
  if (total >= max_jobs) return JobShare::kServerFull;
  if (held > 0 && total >= max_jobs - job_reserve(max_jobs)) return JobShare::kReserveForNew;
  return JobShare::kAdmit;
}

/// Connections (admitted ranks, all its jobs together) one tenant may hold:
/// `share_percent` of `max_connections`, at least 1.
inline std::uint32_t tenant_connection_cap(std::uint32_t max_connections,
                                           std::uint32_t share_percent) {
  return static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, std::uint64_t{max_connections} * share_percent / 100));
}

}  // namespace zipper::forwarder
