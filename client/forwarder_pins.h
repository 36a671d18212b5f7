// The zipperd host keys a rank trusts (as OpenSSH's known_hosts and
// StrictHostKeyChecking): a listener that cannot prove one of them gets
// nothing from the rank. docs/security.md, "Authenticating zipperd".
//
// Sources, all read once at MMPI_Init:
//   MMPI_FORWARDER_KEYS    comma-separated public keys (64 hex digits each),
//                          one per address of MMPI_FORWARDER, in its order
//                          (zipper-run sets it for the zipperd it started or
//                          read the key of);
//   MMPI_KNOWN_FORWARDERS  a file of lines "HOST:PORT[,HOST:PORT...] PUBKEY"
//                          ('#' comments), else the site's file
//                          kSiteKnownForwarders when it exists;
//   MMPI_FORWARDER_KEY_CHECK  "strict" (the default): a forwarder with no
//                          pinned key is refused; "accept": it is used
//                          unauthenticated, which every rank logs (it still
//                          learns nothing that admits anyone to the job, see
//                          auth.h). No trust on first use: docs/security.md.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../proto/auth.h"

namespace zipper::client {

/// The site's known-forwarders file (PREFIX/etc/zipper/known_forwarders).
extern const char* const kSiteKnownForwarders;

struct ForwarderPins {
  std::vector<proto::auth::Key> by_index;              // MMPI_FORWARDER_KEYS, in address order
  std::map<std::string, proto::auth::Key> by_address;  // known_forwarders: HOST:PORT -> key
  std::string known_file;                              // the file by_address came from ("": none)
  bool strict = true;

  /// The key the forwarder at `address` ([tcp:|verbs:]HOST:PORT, entry
  /// `index` of MMPI_FORWARDER) must prove: MMPI_FORWARDER_KEYS first, then
  /// the known-forwarders file (matched on HOST:PORT as written). nullopt:
  /// nothing pinned for it.
  std::optional<proto::auth::Key> lookup(const std::string& address, std::size_t index) const;
};

/// Parses known-forwarders text. nullopt and *why (naming `source` and the
/// line) on a malformed line.
std::optional<std::map<std::string, proto::auth::Key>> parse_known_forwarders(
    const std::string& text, const std::string& source, std::string* why);

/// Reads the sources above for `n_addresses` forwarder addresses. A key file
/// must be a regular file that only its owner (this user or root) may write.
/// nullopt and *why on any problem.
class Environment;  // environment.h
std::optional<ForwarderPins> pins_from(const Environment& env, std::size_t n_addresses,
                                       std::string* why);
/// pins_from(Environment::capture(), ...).
std::optional<ForwarderPins> pins_from_env(std::size_t n_addresses, std::string* why);

}  // namespace zipper::client
