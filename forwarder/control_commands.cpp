#include "control_commands.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "../proto/auth.h"
#include "forwarder.h"
#include "prometheus_text.h"
#include "snapshot_json.h"

namespace zipper::forwarder {

std::string ControlCommands::handle(const std::string& request) {
  using nlohmann::json;
  json answer;
  try {
    const json req = json::parse(request);
    const std::string cmd = req.value("cmd", "");
    if (cmd == "status" || cmd == "jobs" || cmd == "links" || cmd == "pools" || cmd == "routes") {
      answer = to_json(fwd_.snapshot());
    } else if (cmd == "drain") {
      const bool on = req.value("on", true);
      fwd_.set_draining(on);
      answer["draining"] = on;
    } else if (cmd == "set") {
      const std::string key = req.value("key", ""), value = req.value("value", "");
      if (key != "log-level")
        throw std::invalid_argument("cannot set '" + key + "' (log-level can be set)");
      static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
      if (std::find(std::begin(kLevels), std::end(kLevels), value) == std::end(kLevels))
        throw std::invalid_argument("log level must be trace, debug, info, warn or error, got '" +
                                    value + "'");
      set_log_level_(value);
      spdlog::info("log level set to {} by zipperctl", value);
    } else if (cmd == "host-key") {
      // The public half ranks pin (MMPI_FORWARDER_KEYS, known_forwarders).
      answer["host_key"] = proto::auth::to_hex(fwd_.host_public_key());
    } else if (cmd == "metrics") {
      answer["text"] = prometheus_text(fwd_.snapshot(), build_info());
    } else {
      throw std::invalid_argument("unknown command '" + cmd + "'");
    }
    answer["ok"] = true;
  } catch (const std::exception& e) {
    answer = {{"ok", false}, {"error", e.what()}};
  }
  return answer.dump() + "\n";
}

}  // namespace zipper::forwarder
