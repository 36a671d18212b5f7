// zipperd's long-term host key: an X25519 key pair kept in a root-only file,
// which clients pin (as OpenSSH clients pin host keys in known_hosts). The
// public half authenticates zipperd to the ranks: a job's admission key is
// derived for one host key (auth.h, job_key), and only the holder of the
// private half can open it and answer with the key confirmation.
//
// File format: 64 hex digits of the private key and a newline, mode 0600,
// owned by the user zipperd runs as; PATH.pub next to it holds 64 hex digits
// of the public key (mode 0644), the form clients pin.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth.h"

namespace zipper::proto::auth {

/// X25519 key pair; the private half is wiped on destruction.
class HostKey {
 public:
  /// A fresh random pair that lives only in memory (zipperd without
  /// --host-key: clients can pin it only from the log of this run).
  HostKey();
  ~HostKey();
  HostKey(const HostKey&) = delete;
  HostKey& operator=(const HostKey&) = delete;

  /// Reads the key file at `path`. It must be a regular file (not a
  /// symlink), owned by this process's effective user, with no group or
  /// world permission bits, in a directory that no other user may write to.
  /// nullptr and *why (naming the path and the problem) otherwise.
  static std::unique_ptr<HostKey> load(const std::string& path, std::string* why);
  /// load(), or when no file is at `path`: a fresh pair written to `path`
  /// (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) and its public half to PATH.pub
  /// (0644, replacing only a regular file of ours). *created tells which.
  static std::unique_ptr<HostKey> load_or_create(const std::string& path, bool* created,
                                                 std::string* why);

  const Key& public_key() const { return pk_; }
  /// Opens a crypto_box_seal box sealed to this key; nullopt if it was not.
  std::optional<Key> open(const Sealed& box) const;
  /// The key this host shares with the host whose public key is `peer`
  /// (libsodium crypto_kx over the two X25519 host keys; `dialer` is true on
  /// the end that connected). Both ends get the same key, and only the
  /// holders of the two private halves can compute it (bridge_auth.h).
  /// nullopt for a `peer` that is not a valid public key.
  std::optional<Key> link_key(const Key& peer, bool dialer) const;

 private:
  Key pk_{};
  Key sk_{};
};

/// Parses a public key as written in PATH.pub, MMPI_FORWARDER_KEYS and
/// known_forwarders: 64 hex digits. nullopt and *why otherwise.
std::optional<Key> parse_public_key(std::string_view hex, std::string* why);

}  // namespace zipper::proto::auth
