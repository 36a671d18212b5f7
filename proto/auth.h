// Job authentication: the CHALLENGE / AUTH exchange that admits a rank, and
// the libsodium primitives behind it (docs/security.md has the threat model).
//
//   client  --HELLO (job id, rank, layout)-->                        zipperd
//   client  <--CHALLENGE (fresh 32-byte nonce, zipperd's X25519 key)--
//   client  --AUTH (fingerprint, HMAC tag, secret sealed to the key)-->
//   client  <--HELLO_ACK, later JOB_READY   or   ERROR(kAuth) + close--
//
// A job is the pair (job id, fingerprint of its secret): someone without the
// secret can neither join it nor squat its id (a second secret with the same
// id is another job). The tag is crypto_auth (HMAC-SHA-512-256) over the
// nonce and the hello fields, so a recorded AUTH fails on any new connection.
// zipperd opens the sealed secret (crypto_box_seal) only when it does not know
// the job yet, and checks that it hashes to the fingerprint. Verbs links carry
// the HELLO in RDMA CM private data; CHALLENGE and AUTH are frames on every
// link, so admission is the same for TCP and verbs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "link.h"

namespace zipper::proto::auth {

inline constexpr std::size_t kSecretSize = 32;                // bytes of job secret
inline constexpr std::size_t kNonceSize = 32;                 // bytes, fresh per connection
inline constexpr std::size_t kKeySize = 32;                   // X25519 public key / HMAC key
inline constexpr std::size_t kFingerprintSize = 32;           // BLAKE2b of the secret
inline constexpr std::size_t kTagSize = 32;                   // HMAC-SHA-512-256
inline constexpr std::size_t kSealedSize = kSecretSize + 48;  // crypto_box_SEALBYTES = 48
inline constexpr std::size_t kMaxMungeCred = 2048;            // bytes of MUNGE credential

/// CHALLENGE flag: zipperd wants a MUNGE credential in the AUTH frame.
inline constexpr std::uint8_t kWantMunge = 1;

using Secret = std::array<std::byte, kSecretSize>;
using Nonce = std::array<std::byte, kNonceSize>;
using Key = std::array<std::byte, kKeySize>;
using Fingerprint = std::array<std::byte, kFingerprintSize>;
using Tag = std::array<std::byte, kTagSize>;
using Sealed = std::array<std::byte, kSealedSize>;

/// kChallenge payload.
struct ChallengePayload {
  Nonce nonce{};
  Key server_key{};  // zipperd's X25519 public key for crypto_box_seal
};
inline constexpr std::size_t kChallengeSize = kNonceSize + kKeySize;

/// kAuth payload: fixed part, then a u32 length and that many bytes of MUNGE
/// credential (0 unless the challenge asked for one).
struct AuthPayload {
  Fingerprint fingerprint{};
  Tag tag{};
  Sealed sealed_secret{};
  std::string munge_cred;
};
inline constexpr std::size_t kAuthFixedSize = kFingerprintSize + kTagSize + kSealedSize + 4;

void encode_challenge(const ChallengePayload& c, std::span<std::byte, kChallengeSize> out);
/// False unless `in` is exactly kChallengeSize bytes.
bool decode_challenge(std::span<const std::byte> in, ChallengePayload* out);
std::vector<std::byte> encode_auth(const AuthPayload& a);
/// False on a wrong length or a credential above kMaxMungeCred.
bool decode_auth(std::span<const std::byte> in, AuthPayload* out);

/// Initialises libsodium; idempotent and thread-safe. Throws
/// std::runtime_error when the library cannot start (no entropy source).
void init();

/// 32 bytes from the system CSPRNG (randombytes_buf).
Secret random_secret();
Nonce random_nonce();

/// Public digest naming a job's secret (keyed BLAKE2b, crypto_generichash).
Fingerprint fingerprint(const Secret& s);
/// Job id for a launcher that gives none: the first 8 bytes of another keyed
/// digest of the secret, little-endian.
std::uint64_t job_id_from_secret(const Secret& s);
/// Short name of a job for logs (8 hex digits of its fingerprint): reveals
/// neither the secret nor the job id.
std::string log_name(const Fingerprint& f);

/// HMAC key derived from the secret (never the secret itself on the wire).
Key auth_key(const Secret& s);
/// Tag over "zipper-auth-v1", nonce, server key, fingerprint and the hello fields.
Tag make_tag(const Key& key, const ChallengePayload& c, const Fingerprint& f,
             const ConnectHello& who);
/// Constant-time check of a tag (crypto_auth_verify).
bool check_tag(const Key& key, const Tag& tag, const ChallengePayload& c, const Fingerprint& f,
               const ConnectHello& who);

/// X25519 key pair; the secret half is wiped on destruction.
class KeyPair {
 public:
  KeyPair();  // fresh random pair
  ~KeyPair();
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;
  const Key& public_key() const { return pk_; }
  /// Opens a crypto_box_seal box; nullopt if it was not sealed to this key.
  std::optional<Secret> open(const Sealed& box) const;

 private:
  Key pk_{};
  Key sk_{};
};

/// Seals `s` to `server_key` (crypto_box_seal: only zipperd can open it).
Sealed seal(const Secret& s, const Key& server_key);

/// Overwrites a secret in memory (sodium_memzero: not optimised away).
void wipe(Secret& s);

/// Parses 64 hex digits. Returns nullopt and sets *why otherwise.
std::optional<Secret> parse_secret(std::string_view hex, std::string* why);
std::string to_hex(std::span<const std::byte> bytes);

/// Reads a secret (64 hex digits, surrounding white space allowed) from a
/// file that must be a regular file owned by this user and readable by
/// nobody else (mode 0600 or stricter). nullopt and *why on any problem.
std::optional<Secret> read_secret_file(const std::string& path, std::string* why);

}  // namespace zipper::proto::auth
