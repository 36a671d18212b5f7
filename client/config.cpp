#include "config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "environment.h"

namespace zipper::client {
namespace {

bool parse_u64(const Environment& env, const char* name, std::uint64_t* out, std::string* why) {
  const char* v = env.get(name);
  if (v == nullptr || *v == '\0') return true;  // keep the default
  const char* end = v + std::strlen(v);
  auto [p, ec] = std::from_chars(v, end, *out);
  if (ec != std::errc() || p != end) {
    *why = std::string(name) + "='" + v + "' is not a non-negative integer";
    return false;
  }
  return true;
}

// The ZIPPER_VERBS_* rows (proto/verbs/config.h) into *out; unset or empty
// keeps the default. A bad value: false, `why` names the variable.
bool parse_verbs(const Environment& env, proto::verbs::Config* out, std::string* why) {
  for (const auto& row : proto::verbs::settings()) {
    const char* v = env.get(row.env);
    if (v == nullptr || *v == '\0') continue;
    if (std::string err = proto::verbs::set(out, row.key, v); !err.empty()) {
      *why = row.env + ": " + err;
      return false;
    }
  }
  return true;
}

// The job's sites with a forwarder into c->site_ranks and c->site:
// MMPI_SITES ("4,4,2") and MMPI_SITE, else the two-site shorthand
// MMPI_NP_LOW, MMPI_NP_HIGH and MMPI_GROUP. False, `why` naming the
// variable, on a bad or missing value.
bool parse_sites(const Environment& env, ClientConfig* c, std::string* why) {
  const char* list = env.get("MMPI_SITES");
  if (list != nullptr && *list != '\0') {
    const std::string_view text(list);
    std::uint64_t total = 0;
    for (std::size_t at = 0; at <= text.size();) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      std::uint32_t n = 0;
      const auto [end, ec] = std::from_chars(text.data() + at, text.data() + comma, n);
      total += n;
      if (ec != std::errc() || end != text.data() + comma || n == 0 || total > (1u << 24) ||
          c->site_ranks.size() == 64) {
        *why = "MMPI_SITES='" + std::string(text) +
               "' must be 2 to 64 comma-separated positive rank counts, at most 2^24 in all";
        return false;
      }
      c->site_ranks.push_back(n);
      at = comma + 1;
    }
    if (c->site_ranks.size() < 2) {
      *why = "MMPI_SITES='" + std::string(text) +
             "' names one site: a job through zipperd spans 2 to 64";
      return false;
    }
    std::uint64_t site = ~std::uint64_t{0};  // unset: out of range below
    if (!parse_u64(env, "MMPI_SITE", &site, why)) return false;
    if (site >= c->site_ranks.size()) {
      *why = "MMPI_SITE must be this process's site, 0 to " +
             std::to_string(c->site_ranks.size() - 1) + " (MMPI_SITES has " +
             std::to_string(c->site_ranks.size()) + " sites)";
      return false;
    }
    c->site = static_cast<std::uint32_t>(site);
    c->site_list = true;
    return true;
  }
  std::uint64_t x = 0, y = 0;
  if (!parse_u64(env, "MMPI_NP_LOW", &x, why) || !parse_u64(env, "MMPI_NP_HIGH", &y, why))
    return false;
  if (x == 0 || y == 0 || x + y > (1u << 24)) {
    *why = "MMPI_NP_LOW and MMPI_NP_HIGH (or MMPI_SITES) must both be set to positive rank counts";
    return false;
  }
  c->site_ranks = {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)};
  const char* group = env.get("MMPI_GROUP");
  if (group == nullptr || (std::strcmp(group, "low") != 0 && std::strcmp(group, "high") != 0)) {
    *why = "MMPI_GROUP must be 'low' or 'high'";
    return false;
  }
  c->site = std::strcmp(group, "high") == 0 ? 1 : 0;
  return true;
}

}  // namespace

std::optional<ClientConfig> config_from_env(std::string* why) {
  return config_from(Environment::capture(), why);
}

std::optional<ClientConfig> config_from(const Environment& env, std::string* why) {
  ClientConfig c;
  std::uint64_t timeout = static_cast<std::uint64_t>(c.connect_timeout_s);
  std::uint64_t spins = static_cast<std::uint64_t>(c.spin_rounds);
  if (!parse_u64(env, "MMPI_EAGER_LIMIT", &c.eager_limit, why) ||
      !parse_u64(env, "MMPI_SPIN_ROUNDS", &spins, why) ||
      !parse_u64(env, "MMPI_CHUNK_SIZE", &c.chunk_size, why) ||
      !parse_u64(env, "MMPI_CONNECT_TIMEOUT", &timeout, why) ||
      !parse_u64(env, "MMPI_RETRANSMIT_BYTES", &c.retransmit_bytes, why))
    return std::nullopt;
  std::uint64_t fwd_timeout = 0;
  c.forwarder_timeout_set = env.get("MMPI_FORWARDER_TIMEOUT") != nullptr;
  if (!parse_u64(env, "MMPI_FORWARDER_TIMEOUT", &fwd_timeout, why)) return std::nullopt;
  if (c.forwarder_timeout_set)
    c.forwarder_timeout_ms = static_cast<int>(std::min<std::uint64_t>(fwd_timeout, 3600000));
  c.connect_timeout_s = static_cast<int>(timeout);
  c.spin_rounds = static_cast<int>(std::min<std::uint64_t>(spins, 1u << 30));
  if (c.chunk_size < 1024) {
    *why = "MMPI_CHUNK_SIZE must be at least 1024 bytes";
    return std::nullopt;
  }
  if (!parse_verbs(env, &c.verbs, why)) return std::nullopt;
  const char* fwd = env.get("MMPI_FORWARDER");
  if (fwd == nullptr || *fwd == '\0') return c;  // standalone: one cluster only
  c.forwarder = fwd;
  if (!parse_sites(env, &c, why)) return std::nullopt;
  const char* secret = env.get("MMPI_JOB_SECRET");
  const char* secret_file = env.get("MMPI_JOB_SECRET_FILE");
  if (secret != nullptr && *secret != '\0') {
    c.job_secret = proto::auth::parse_secret(secret, why);
    if (!c.job_secret) {
      *why = "MMPI_JOB_SECRET: " + *why;
      return std::nullopt;
    }
    ::unsetenv("MMPI_JOB_SECRET");
  } else if (secret_file != nullptr && *secret_file != '\0') {
    c.job_secret = proto::auth::read_secret_file(secret_file, why);
    if (!c.job_secret) return std::nullopt;
  } else if (const char* secret_fd = env.get("MMPI_JOB_SECRET_FD");
             secret_fd != nullptr && *secret_fd != '\0') {
    std::uint64_t fd = 0;
    if (!parse_u64(env, "MMPI_JOB_SECRET_FD", &fd, why) || fd > 1u << 20) {
      if (why->empty()) *why = "MMPI_JOB_SECRET_FD must be a file descriptor number";
      return std::nullopt;
    }
    c.job_secret = proto::auth::read_secret_fd(static_cast<int>(fd), why);
    ::unsetenv("MMPI_JOB_SECRET_FD");  // closed: a child must not trust the number
    if (!c.job_secret) return std::nullopt;
  } else {
    *why =
        "MMPI_JOB_SECRET, MMPI_JOB_SECRET_FILE or MMPI_JOB_SECRET_FD must give the job secret "
        "(zipper-run creates "
        "one per run)";
    return std::nullopt;
  }
  if (const char* ms = env.get("MMPI_MUNGE_SOCKET")) c.munge_socket = ms;
  auto pins = pins_from(env, 1 + std::count(c.forwarder->begin(), c.forwarder->end(), ','), why);
  if (!pins) return std::nullopt;
  c.pins = std::move(*pins);
  c.job_id = proto::auth::job_id_from_secret(*c.job_secret);
  if (!parse_u64(env, "MMPI_JOB_ID", &c.job_id, why)) return std::nullopt;
  return c;
}

std::optional<SiteMap> sites_from(const ClientConfig& c, int local_ranks, std::string* why) {
  if (!c.forwarder) return SiteMap::single(local_ranks);
  auto m = SiteMap::make({c.site_ranks.begin(), c.site_ranks.end()}, static_cast<int>(c.site), why);
  if (!m) return std::nullopt;
  if (m->local_ranks().size() != local_ranks) {
    *why = "this cluster runs " + std::to_string(local_ranks) + " ranks but " +
           (c.site_list ? "MMPI_SITES says " + std::to_string(m->local_ranks().size()) +
                              " for site " + std::to_string(c.site)
                        : std::string("MMPI_NP_") + (c.site == 1 ? "HIGH" : "LOW") + " says " +
                              std::to_string(m->local_ranks().size()));
    return std::nullopt;
  }
  return m;
}

}  // namespace zipper::client
