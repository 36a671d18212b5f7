// Site identity through MUNGE (--auth munge): decodes a rank's credential
// with the munged of the listener's cluster and returns the uid it vouches
// for. The credential's payload must be the connection's nonce, so a
// credential cannot be moved to another connection; munged itself refuses a
// credential decoded twice (replay).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "auth.h"

namespace zipper::proto::auth {

class MungeVerifier {
 public:
  /// `socket`: munged's socket for this side; empty = libmunge's default.
  /// Throws std::runtime_error when zipperd was built without libmunge.
  explicit MungeVerifier(std::string socket);
  ~MungeVerifier();
  MungeVerifier(const MungeVerifier&) = delete;
  MungeVerifier& operator=(const MungeVerifier&) = delete;

  /// uid of a valid credential whose payload is `nonce`; nullopt and *why otherwise.
  std::optional<std::uint32_t> verify(const std::string& cred, const Nonce& nonce,
                                      std::string* why) const;
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  void* ctx_ = nullptr;  // munge_ctx_t
};

/// Client half: a credential whose payload is `nonce`, from munged at
/// `socket` (empty: libmunge's default). nullopt and *why without libmunge or
/// munged.
std::optional<std::string> munge_credential(const Nonce& nonce, const std::string& socket,
                                            std::string* why);

}  // namespace zipper::proto::auth
