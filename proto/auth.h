// Job authentication: the CHALLENGE / AUTH exchange that admits a rank and
// authenticates zipperd to it, and the libsodium primitives behind it
// (docs/security.md has the threat model).
//
//   client  --HELLO (job id, rank, site table)-->                     zipperd
//   client  <--CHALLENGE (fresh nonce, zipperd's host key)--------------
//           the client checks the host key against the pinned one and
//           sends nothing more to a listener with another key
//   client  --AUTH (fingerprint, tag, client nonce, job key sealed to the
//                   host key, the connection's ends as the client sees them)-->
//   client  <--HELLO_ACK (credits, key confirmation) | ERROR(kAuth) + close
//           the client accepts no frame before a HELLO_ACK whose
//           confirmation checks out
//
// The job secret never leaves the job. A rank derives from it the job key
// for the host key it was shown (job_key) and zipperd gets only that key:
// sealed to the host key it opens only with the private half, and checked
// against the job's fingerprint (its hash), so a party that has seen the
// fingerprint cannot create the job and squat its id. The tag (HMAC-SHA-
// 512-256) covers both nonces, the host key and the connection's two ends,
// so a recorded AUTH fails on any other connection, and one relayed through
// a squatter's socket fails at zipperd (zipperd sees other ends). The
// confirmation in HELLO_ACK (a tag under the job key over the client's tag)
// proves to the rank that the listener opened the sealed key, i.e. holds the
// host key. What a rank sends to a listener with another key admits nobody
// anywhere else: that job key is bound to the other key.
//
// Verbs links carry the HELLO in RDMA CM private data; CHALLENGE and AUTH are
// frames on every link, so admission is the same for TCP and verbs (verbs
// links have no IP ends to bind: their AUTH carries none).
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

inline constexpr std::size_t kSecretSize = 32;             // bytes of job secret
inline constexpr std::size_t kNonceSize = 32;              // bytes, fresh per connection
inline constexpr std::size_t kKeySize = 32;                // X25519 public key / HMAC key
inline constexpr std::size_t kFingerprintSize = 32;        // BLAKE2b of the secret
inline constexpr std::size_t kTagSize = 32;                // HMAC-SHA-512-256
inline constexpr std::size_t kSealedSize = kKeySize + 48;  // crypto_box_SEALBYTES = 48
inline constexpr std::size_t kMaxMungeCred = 2048;         // bytes of MUNGE credential

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
  Key server_key{};  // zipperd's host key (host_key.h): what clients pin
};
inline constexpr std::size_t kChallengeSize = kNonceSize + kKeySize;

inline constexpr std::size_t kMaxAddressText = 64;  // bytes of one "IP:PORT" in AUTH

/// kAuth payload: fixed part, the connection's two ends as the client sees
/// them (u8 length + text each), then a u32 length and that many bytes of
/// MUNGE credential (0 unless the challenge asked for one).
struct AuthPayload {
  Fingerprint fingerprint{};  // job_fingerprint(job key): the job's public name at this zipperd
  Tag tag{};                  // make_tag(job key, ...)
  Nonce client_nonce{};       // fresh per connection: zipperd's confirmation covers it
  Sealed sealed_key{};        // the job key sealed to the host key (crypto_box_seal)
  std::string client_local;   // "IP:PORT" of the client's end ("" on links without one)
  std::string client_peer;    // "IP:PORT" the client connected to
  std::string munge_cred;
};
inline constexpr std::size_t kAuthFixedSize =
    kFingerprintSize + kTagSize + kNonceSize + kSealedSize + 1 + 1 + 4;

void encode_challenge(const ChallengePayload& c, std::span<std::byte, kChallengeSize> out);
/// False unless `in` is exactly kChallengeSize bytes.
bool decode_challenge(std::span<const std::byte> in, ChallengePayload* out);
std::vector<std::byte> encode_auth(const AuthPayload& a);
/// False on a wrong length, an address above kMaxAddressText or a credential
/// above kMaxMungeCred.
bool decode_auth(std::span<const std::byte> in, AuthPayload* out);

/// Initialises libsodium; idempotent and thread-safe. Throws
/// std::runtime_error when the library cannot start (no entropy source).
void init();

/// 32 bytes from the system CSPRNG (randombytes_buf).
Secret random_secret();
Nonce random_nonce();

/// Job id for a launcher that gives none: the first 8 bytes of another keyed
/// digest of the secret, little-endian.
std::uint64_t job_id_from_secret(const Secret& s);
/// Short name of a job for logs (8 hex digits of its fingerprint): reveals
/// neither the secret nor the job id.
std::string log_name(const Fingerprint& f);

/// The job's admission key at the zipperd whose host key is `host_key`:
/// keyed BLAKE2b of that key under the secret. zipperd learns only this, so
/// what a rank sends to a listener with another key (a squatter) admits
/// nobody at the real zipperd, and the secret never leaves the job.
Key job_key(const Secret& s, const Key& host_key);
/// The job's public name at one zipperd: BLAKE2b of its job key. zipperd
/// creates a job only for a job key that hashes to it, so a party that saw
/// the fingerprint on the wire cannot squat the job.
Fingerprint job_fingerprint(const Key& job_key);

/// Tag over "zipper-auth-v3", the challenge (nonce, host key), the client
/// nonce, the fingerprint, the hello fields (job, rank, site, site table) and the connection's ends
/// as the client sees them: good for one connection to one zipperd only.
Tag make_tag(const Key& job_key, const ChallengePayload& c, const AuthPayload& a,
             const ConnectHello& who);
/// Constant-time check of a.tag (crypto_auth_verify).
bool check_tag(const Key& job_key, const ChallengePayload& c, const AuthPayload& a,
               const ConnectHello& who);
/// zipperd's key confirmation in HELLO_ACK: a tag over "zipper-ack-v2" and
/// the client's tag under the job key. Only a holder of the job key, i.e. of
/// the host key's private half (or of the job secret), can make it.
Tag confirm_tag(const Key& job_key, const Tag& client_tag);
bool check_confirm(const Key& job_key, const Tag& client_tag, const Tag& confirm);

/// Seals a job key to `host_key` (crypto_box_seal: only the holder of the
/// private half opens it, HostKey::open).
Sealed seal(const Key& job_key, const Key& host_key);

/// What a rank sends in AUTH, and the confirmation it then expects.
struct ClientProof {
  AuthPayload auth;
  Key job_key{};
  ~ClientProof();  // wipes job_key
};
/// The rank's answer to a challenge from the forwarder with host key
/// c.server_key (checked against any pinned key by the caller first).
/// `local` / `peer`: the link's ends (Link::local_address, remote_address).
ClientProof prove(const Secret& s, const ChallengePayload& c, const ConnectHello& who,
                  std::string local, std::string peer);

/// Overwrites a secret in memory (sodium_memzero: not optimised away).
void wipe(Secret& s);

/// Parses 64 hex digits. Returns nullopt and sets *why otherwise.
std::optional<Secret> parse_secret(std::string_view hex, std::string* why);
std::string to_hex(std::span<const std::byte> bytes);

/// Reads a secret (64 hex digits, surrounding white space allowed) from a
/// file that must be a regular file owned by this user and readable by
/// nobody else (mode 0600 or stricter). nullopt and *why on any problem.
std::optional<Secret> read_secret_file(const std::string& path, std::string* why);

/// Reads a secret from an inherited file descriptor (zipper-run --slurm passes
/// a memfd, docs/slurm.md) under the same rules as read_secret_file, then
/// closes it. nullopt and *why on any problem (fd not open, readable by others).
std::optional<Secret> read_secret_fd(int fd, std::string* why);

}  // namespace zipper::proto::auth
