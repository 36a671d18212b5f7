// libmmpi settings, read from the environment zipper-run sets
// (docs/launch-contract.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zipper::client {

struct ClientConfig {
  std::optional<std::string> forwarder;  // [tcp:]HOST:PORT; unset = standalone
  std::uint64_t job_id = 0;
  bool high_group = false;            // MMPI_GROUP=high
  std::uint32_t np_low = 0;           // x
  std::uint32_t np_high = 0;          // y
  std::uint64_t eager_limit = 16384;  // bytes; larger messages use the rendezvous
  std::uint64_t chunk_size = 131072;  // bytes: largest rendezvous chunk
  int connect_timeout_s = 60;         // whole job must connect within this
  int spin_rounds = 1000;  // MMPI_SPIN_ROUNDS: busy progress rounds before a wait sleeps
};

/// Reads MMPI_* variables. Returns nullopt and sets *why on invalid values.
std::optional<ClientConfig> config_from_env(std::string* why);

}  // namespace zipper::client
