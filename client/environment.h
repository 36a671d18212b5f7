// The values of libmmpi's MMPI_* variables, read from the process
// environment once (at MMPI_Init) and handed to whoever makes configuration
// from them (config.h, forwarder_pins.h, collectives/selection.h).
// settings.h has the table that names every one of them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace zipper::client {

class Environment {
 public:
  /// Reads the process environment: the one place libmmpi does. Keeps the
  /// variables settings.h's table names.
  static Environment capture();
  /// Exactly `values` (tests).
  static Environment of(std::map<std::string, std::string, std::less<>> values);
  /// The value of `name`, nullptr when unset.
  const char* get(std::string_view name) const;
  /// Drops `name` (the job secret, once parsed).
  void forget(std::string_view name);

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace zipper::client
