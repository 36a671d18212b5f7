// libmmpi's settings: one table names every environment variable the
// library reads, once, with its type, default and check (after
// forwarder/daemon_config.h). The environment is read once, at MMPI_Init
// (Environment::capture); the configuration made from it is passed down:
// the link's part (config.h, forwarder_pins.h) here, the collectives' part
// by collectives/selection.h, which knows the collectives' names.
// Variables zipper-run sets are described in docs/launch-contract.md.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "config.h"
#include "environment.h"

namespace zipper::client {

/// One row of the table.
struct SettingInfo {
  std::string_view env;       // the variable; MMPI_<COLLECTIVE>_ALGORITHM names a family
  std::string_view type;      // what the value is: bytes, ms, seconds, count, text, path, keys
  std::string_view fallback;  // the default when unset ("" = none)
  std::string_view check;     // what is accepted; anything else fails MMPI_Init (or the call)
};

/// Every setting of libmmpi, each once.
std::span<const SettingInfo> settings_table();

/// libmmpi's configuration for this process, made once at MMPI_Init
/// (Runtime::init) and passed down.
struct Settings {
  Environment env;      // the values as read (collectives/selection.h takes its part)
  ClientConfig client;  // the link (config.h)
};

}  // namespace zipper::client
