// Typed link errors: callers branch on the kind, never on the message text
// (as Gloo's SystemError / ShortReadError / TimeoutError).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zipper::proto {

enum class LinkErrorKind : std::uint8_t {
  kNone = 0,
  kMalformed,   // the peer sent bytes that are not a valid frame (header, SEND kind, grant)
  kPeerClosed,  // the peer went away outside a frame boundary handshake (reset, pipe, disconnect)
  kTruncated,   // the stream ended in the middle of a frame
  kSystem,      // a system or verbs call failed; LinkError::sys_errno says why
  kTimeout,     // no answer in time (connect timeout, transport retries exhausted)
  kRefused,     // the peer refused the connection (nobody listens, hello rejected)
  kTransport,   // a completion (WC) error or a device event other than a timeout
  kProtocol,    // the peer broke the link protocol (credits, grants) without a bad frame
  kInternal,    // a bug on this side (e.g. a sink returned a buffer of the wrong size)
  kVersionMismatch,  // the peer speaks another wire protocol version (LinkError::peer_version)
};

constexpr std::string_view to_string(LinkErrorKind k) {
  switch (k) {
    case LinkErrorKind::kNone:
      return "none";
    case LinkErrorKind::kMalformed:
      return "malformed";
    case LinkErrorKind::kPeerClosed:
      return "peer closed";
    case LinkErrorKind::kTruncated:
      return "truncated";
    case LinkErrorKind::kSystem:
      return "system";
    case LinkErrorKind::kTimeout:
      return "timeout";
    case LinkErrorKind::kRefused:
      return "refused";
    case LinkErrorKind::kTransport:
      return "transport";
    case LinkErrorKind::kProtocol:
      return "protocol";
    case LinkErrorKind::kInternal:
      return "internal";
    case LinkErrorKind::kVersionMismatch:
      return "version";
  }
  return "unknown";
}

/// What went wrong on a link: the kind to branch on, the errno for kSystem
/// (0 otherwise), a message for logs that names the peer, and for kVersionMismatch
/// the protocol version the peer's frame header carried.
struct LinkError {
  LinkErrorKind kind = LinkErrorKind::kNone;
  int sys_errno = 0;
  std::string message;
  std::uint16_t peer_version = 0;

  explicit operator bool() const { return kind != LinkErrorKind::kNone; }
  /// "CALL: strerror(err)" with the kind errno implies: EPIPE/ECONNRESET
  /// kPeerClosed, ETIMEDOUT kTimeout, ECONNREFUSED kRefused, else kSystem.
  static LinkError from_errno(std::string_view call, int err) {
    LinkErrorKind k = LinkErrorKind::kSystem;
    if (err == EPIPE || err == ECONNRESET) k = LinkErrorKind::kPeerClosed;
    if (err == ETIMEDOUT) k = LinkErrorKind::kTimeout;
    if (err == ECONNREFUSED) k = LinkErrorKind::kRefused;
    return {k, err, std::string(call) + ": " + std::strerror(err)};
  }
};

/// Thrown by connect() / listen() when a link cannot be set up; a
/// std::runtime_error whose what() is the message, carrying the kind.
class LinkFailure : public std::runtime_error {
 public:
  explicit LinkFailure(LinkError e) : std::runtime_error(e.message), error_(std::move(e)) {}
  const LinkError& error() const noexcept { return error_; }

 private:
  LinkError error_;
};

}  // namespace zipper::proto
