// zipperctl's side of the control socket: one JSON request line, one JSON
// answer (protocol in forwarder/control_commands.h).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace zipper::ctl {

/// The socket cannot be reached or the answer is not JSON.
class ControlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Refuses a control socket that another user could have planted: `path`
/// must be a socket owned by root, the caller or the zipper service user, and
/// (when `fd` >= 0, a connected socket) the process serving it must run as
/// one of them (SO_PEERCRED). Throws ControlError naming the owner.
void check_socket_owner(const std::string& path, int fd);

/// Sends `request` to the zipperd at Unix socket `path` and returns its
/// answer. Throws ControlError naming the path (connect refused, permission
/// denied, no answer within `timeout`, an untrusted
/// owner: check_socket_owner) and when the answer has "ok": false.
nlohmann::json request(const std::string& path, const nlohmann::json& request,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace zipper::ctl
