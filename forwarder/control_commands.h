// The control socket's commands (zipperctl's protocol). One JSON object per
// request line, one per answer:
//   {"cmd":"status"|"jobs"|"links"|"pools"}  -> {"ok":true, "status":{..}, "jobs":[..], ...}
//   {"cmd":"drain","on":true|false}           -> {"ok":true, "draining":bool}
//   {"cmd":"set","key":"log-level","value":L} -> {"ok":true}
//   {"cmd":"metrics"}                         -> {"ok":true, "text":"<Prometheus text>"}
// Errors: {"ok":false, "error":"why"}.
#pragma once

#include <functional>
#include <string>

namespace zipper::forwarder {

class Forwarder;

class ControlCommands {
 public:
  /// `set_log_level` gets a validated level name (trace..error).
  ControlCommands(Forwarder& fwd, std::function<void(const std::string&)> set_log_level)
      : fwd_(fwd), set_log_level_(std::move(set_log_level)) {}

  /// Answers one request line (JSON text), newline-terminated.
  std::string handle(const std::string& request);

 private:
  Forwarder& fwd_;
  std::function<void(const std::string&)> set_log_level_;
};

}  // namespace zipper::forwarder
