// The forwarder core's settings check (forwarder_config.h).
#include "forwarder_config.h"

#include <stdexcept>
#include <string>

#include "../proto/frame.h"

namespace zipper::forwarder {

void check_config(Config& cfg) {
  if (cfg.listen.empty()) throw std::invalid_argument("at least one --listen is required");
  if (cfg.max_frame < 1024 || cfg.max_frame > proto::kMaxPayloadLimit)
    throw std::invalid_argument("max frame must be between 1 KiB and 64 MiB");
  if (cfg.conn_credits < 2 || cfg.conn_credits > kMaxConnCredits)
    throw std::invalid_argument("connection credits (" + std::to_string(cfg.conn_credits) +
                                " frames) must be between 2 and " +
                                std::to_string(kMaxConnCredits));
  if (cfg.pools.empty()) cfg.pools = default_pool_classes(cfg.max_memory, cfg.max_frame);
  if (auto why = validate_pool_classes(cfg.pools, cfg.max_memory, cfg.max_frame); !why.empty())
    throw std::invalid_argument(why);
  if (cfg.auth != "secret" && cfg.auth != "munge" && cfg.auth != "auto")
    throw std::invalid_argument("auth must be 'secret', 'munge' or 'auto', got '" + cfg.auth + "'");
  if (cfg.max_ranks < 2 || cfg.max_ranks > (1u << 24))
    throw std::invalid_argument("max ranks must be between 2 and 16777216");
  if (cfg.max_jobs == 0 || cfg.max_connections == 0 || cfg.max_jobs_per_user == 0)
    throw std::invalid_argument("max jobs, max jobs per user and max connections must be positive");
  if (cfg.max_jobs_per_prefix == 0 || cfg.control_budget == 0 || cfg.idle_evict_ms <= 0)
    throw std::invalid_argument(
        "max jobs per prefix, the control budget and the idle eviction time must be positive");
  if (cfg.prefix_v4 < 1 || cfg.prefix_v4 > 32 || cfg.prefix_v6 < 1 || cfg.prefix_v6 > 128)
    throw std::invalid_argument("address prefixes must be 1..32 (IPv4) and 1..128 (IPv6) bits");
  if (cfg.max_job_connections_share < 1 || cfg.max_job_connections_share > 100)
    throw std::invalid_argument("a job's share of the connections must be 1 to 100 percent");
  if (std::uint64_t{cfg.max_connections} * cfg.max_job_connections_share / 100 < 2)
    throw std::invalid_argument(
        "a job's share of --max-connections must allow a 1+1 job (at least 2 connections)");
  if (cfg.hello_timeout_ms <= 0 || cfg.ready_timeout_ms <= 0 || cfg.frame_timeout_ms <= 0 ||
      cfg.accept_pause_ms <= 0 || cfg.keepalive_s < 0)
    throw std::invalid_argument("timeouts must be positive (keepalive 0 = off)");
  std::vector<std::string> legs;
  for (const auto& l : cfg.listen) legs.push_back(l.name);
  cfg.bridges = make_bridge_map(legs, cfg.site_names, cfg.peers);
}

}  // namespace zipper::forwarder
