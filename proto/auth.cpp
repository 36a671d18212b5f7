#include "auth.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace zipper::proto::auth {
namespace {

static_assert(crypto_box_SEALBYTES + kKeySize == kSealedSize);
static_assert(crypto_box_PUBLICKEYBYTES == kKeySize && crypto_box_SECRETKEYBYTES == kKeySize);
static_assert(crypto_auth_BYTES == kTagSize && crypto_auth_KEYBYTES == kKeySize);

const unsigned char* u8(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* u8(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

// Keyed BLAKE2b of a fixed label: distinct labels give independent values
// from one secret (fingerprint, HMAC key, job id).
template <std::size_t N>
std::array<std::byte, N> derive(const Secret& s, std::string_view label) {
  std::array<std::byte, N> out{};
  crypto_generichash(u8(out.data()), N, reinterpret_cast<const unsigned char*>(label.data()),
                     label.size(), u8(s.data()), s.size());
  return out;
}

void put_u32(std::vector<std::byte>& v, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(std::byte((x >> (8 * i)) & 0xff));
}
void put_u64(std::vector<std::byte>& v, std::uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(std::byte((x >> (8 * i)) & 0xff));
}
template <std::size_t N>
void put(std::vector<std::byte>& v, const std::array<std::byte, N>& a) {
  v.insert(v.end(), a.begin(), a.end());
}

void put_text(std::vector<std::byte>& v, const std::string& t) {
  v.push_back(std::byte(t.size()));
  for (char ch : t) v.push_back(std::byte(ch));
}

std::vector<std::byte> transcript(const ChallengePayload& c, const AuthPayload& a,
                                  const ConnectHello& who) {
  // v3: the hello fields of wire protocol 2 (the site table).
  static constexpr std::string_view kLabel = "zipper-auth-v3";
  std::vector<std::byte> t;
  t.reserve(kLabel.size() + kChallengeSize + kNonceSize + kFingerprintSize + 20 +
            4 * who.site_ranks.size() + 2 + a.client_local.size() + a.client_peer.size());
  for (char ch : kLabel) t.push_back(std::byte(ch));
  put(t, c.nonce);
  put(t, c.server_key);
  put(t, a.client_nonce);
  put(t, a.fingerprint);
  put_u64(t, who.job_id);
  put_u32(t, who.vrank);
  put_u32(t, who.site);
  put_u32(t, static_cast<std::uint32_t>(who.site_ranks.size()));
  for (std::uint32_t r : who.site_ranks) put_u32(t, r);
  put_text(t, a.client_local);
  put_text(t, a.client_peer);
  return t;
}

std::array<std::byte, 13 + kTagSize> confirm_text(const Tag& client_tag) {
  static constexpr std::string_view kLabel = "zipper-ack-v2";
  static_assert(kLabel.size() == 13);
  std::array<std::byte, 13 + kTagSize> t{};
  std::memcpy(t.data(), kLabel.data(), kLabel.size());
  std::memcpy(t.data() + kLabel.size(), client_tag.data(), kTagSize);
  return t;
}

}  // namespace

void encode_challenge(const ChallengePayload& c, std::span<std::byte, kChallengeSize> out) {
  std::memcpy(out.data(), c.nonce.data(), kNonceSize);
  std::memcpy(out.data() + kNonceSize, c.server_key.data(), kKeySize);
}

bool decode_challenge(std::span<const std::byte> in, ChallengePayload* out) {
  if (in.size() != kChallengeSize) return false;
  std::memcpy(out->nonce.data(), in.data(), kNonceSize);
  std::memcpy(out->server_key.data(), in.data() + kNonceSize, kKeySize);
  return true;
}

std::vector<std::byte> encode_auth(const AuthPayload& a) {
  std::vector<std::byte> v;
  v.reserve(kAuthFixedSize + a.client_local.size() + a.client_peer.size() + a.munge_cred.size());
  put(v, a.fingerprint);
  put(v, a.tag);
  put(v, a.client_nonce);
  put(v, a.sealed_key);
  put_text(v, a.client_local.substr(0, kMaxAddressText));
  put_text(v, a.client_peer.substr(0, kMaxAddressText));
  put_u32(v, static_cast<std::uint32_t>(a.munge_cred.size()));
  for (char ch : a.munge_cred) v.push_back(std::byte(ch));
  return v;
}

bool decode_auth(std::span<const std::byte> in, AuthPayload* out) {
  if (in.size() < kAuthFixedSize) return false;
  const std::byte* p = in.data();
  const std::byte* const end = in.data() + in.size();
  const auto take = [&p](auto& arr) {
    std::memcpy(arr.data(), p, arr.size());
    p += arr.size();
  };
  take(out->fingerprint);
  take(out->tag);
  take(out->client_nonce);
  take(out->sealed_key);
  // Bounds: the fixed size counts one length byte per address and the u32.
  for (std::string* text : {&out->client_local, &out->client_peer}) {
    const std::size_t n = std::to_integer<std::size_t>(*p++);
    if (n > kMaxAddressText || static_cast<std::size_t>(end - p) < n + 4) return false;
    text->assign(reinterpret_cast<const char*>(p), n);
    p += n;
  }
  if (end - p < 4) return false;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= std::uint32_t(p[i]) << (8 * i);
  p += 4;
  if (n > kMaxMungeCred || static_cast<std::size_t>(end - p) != n) return false;
  out->munge_cred.assign(reinterpret_cast<const char*>(p), n);
  return true;
}

void init() {
  // sodium_init is thread-safe; 1 means it already ran.
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
}

Secret random_secret() {
  init();
  Secret s;
  randombytes_buf(s.data(), s.size());
  return s;
}

Nonce random_nonce() {
  init();
  Nonce n;
  randombytes_buf(n.data(), n.size());
  return n;
}

std::uint64_t job_id_from_secret(const Secret& s) {
  const auto b = derive<8>(s, "zipper-job-id");
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id |= std::uint64_t(b[i]) << (8 * i);
  return id;
}

std::string log_name(const Fingerprint& f) { return to_hex(std::span(f).first(4)); }

Key job_key(const Secret& s, const Key& host_key) {
  static constexpr std::string_view kLabel = "zipper-job-key-v2";
  std::array<std::byte, kLabel.size() + kKeySize> msg{};
  std::memcpy(msg.data(), kLabel.data(), kLabel.size());
  std::memcpy(msg.data() + kLabel.size(), host_key.data(), kKeySize);
  Key k;
  crypto_generichash(u8(k.data()), k.size(), u8(msg.data()), msg.size(), u8(s.data()), s.size());
  return k;
}

Fingerprint job_fingerprint(const Key& job_key) {
  static constexpr std::string_view kLabel = "zipper-job-fp-v2";
  Fingerprint f;
  crypto_generichash(u8(f.data()), f.size(), reinterpret_cast<const unsigned char*>(kLabel.data()),
                     kLabel.size(), u8(job_key.data()), job_key.size());
  return f;
}

Tag make_tag(const Key& job_key, const ChallengePayload& c, const AuthPayload& a,
             const ConnectHello& who) {
  const auto t = transcript(c, a, who);
  Tag tag;
  crypto_auth(u8(tag.data()), u8(t.data()), t.size(), u8(job_key.data()));
  return tag;
}

bool check_tag(const Key& job_key, const ChallengePayload& c, const AuthPayload& a,
               const ConnectHello& who) {
  const auto t = transcript(c, a, who);
  return crypto_auth_verify(u8(a.tag.data()), u8(t.data()), t.size(), u8(job_key.data())) == 0;
}

Tag confirm_tag(const Key& job_key, const Tag& client_tag) {
  const auto t = confirm_text(client_tag);
  Tag tag;
  crypto_auth(u8(tag.data()), u8(t.data()), t.size(), u8(job_key.data()));
  return tag;
}

bool check_confirm(const Key& job_key, const Tag& client_tag, const Tag& confirm) {
  const auto t = confirm_text(client_tag);
  return crypto_auth_verify(u8(confirm.data()), u8(t.data()), t.size(), u8(job_key.data())) == 0;
}

Sealed seal(const Key& job_key, const Key& host_key) {
  init();
  Sealed box;
  crypto_box_seal(u8(box.data()), u8(job_key.data()), job_key.size(), u8(host_key.data()));
  return box;
}

ClientProof::~ClientProof() { sodium_memzero(job_key.data(), job_key.size()); }

ClientProof prove(const Secret& s, const ChallengePayload& c, const ConnectHello& who,
                  std::string local, std::string peer) {
  ClientProof p;
  p.job_key = job_key(s, c.server_key);
  p.auth.fingerprint = job_fingerprint(p.job_key);
  p.auth.client_nonce = random_nonce();
  p.auth.sealed_key = seal(p.job_key, c.server_key);
  p.auth.client_local = std::move(local);
  p.auth.client_peer = std::move(peer);
  p.auth.client_local.resize(std::min(p.auth.client_local.size(), kMaxAddressText));
  p.auth.client_peer.resize(std::min(p.auth.client_peer.size(), kMaxAddressText));
  p.auth.tag = make_tag(p.job_key, c, p.auth, who);
  return p;
}

void wipe(Secret& s) { sodium_memzero(s.data(), s.size()); }

std::optional<Secret> parse_secret(std::string_view hex, std::string* why) {
  Secret s;
  std::size_t len = 0;
  const char* end = nullptr;
  if (hex.size() != 2 * kSecretSize ||
      sodium_hex2bin(u8(s.data()), s.size(), hex.data(), hex.size(), nullptr, &len, &end) != 0 ||
      len != kSecretSize) {
    *why = "a job secret must be " + std::to_string(2 * kSecretSize) + " hex digits";
    return std::nullopt;
  }
  return s;
}

std::string to_hex(std::span<const std::byte> bytes) {
  std::string out(2 * bytes.size() + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), u8(bytes.data()), bytes.size());
  out.pop_back();
  return out;
}

namespace {

// The secret from an open file: a regular file (memfds are) of this user that
// nobody else may read, read from offset 0 so that the caller's offset stays.
std::optional<Secret> secret_from_fd(int fd, const std::string& what, std::string* why) {
  struct stat st {};
  char buf[256];
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) == 0)
    n = ::pread(fd, buf, sizeof buf, 0);
  else
    *why = what + " must be a regular file owned by this user with mode 0600";
  if (n < 0) {
    if (why->empty()) *why = "cannot read " + what + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string_view text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  auto s = parse_secret(text, why);
  if (!s) *why = what + ": " + *why;
  sodium_memzero(buf, sizeof buf);
  return s;
}

}  // namespace

std::optional<Secret> read_secret_file(const std::string& path, std::string* why) {
  struct OwnedFd {
    int fd;
    ~OwnedFd() {
      if (fd >= 0) ::close(fd);
    }
  } file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (file.fd < 0) {
    *why = "cannot open secret file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return secret_from_fd(file.fd, "secret file " + path, why);
}

std::optional<Secret> read_secret_fd(int fd, std::string* why) {
  const std::string what = "secret fd " + std::to_string(fd);
  if (fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
    *why = what + " is not open";
    return std::nullopt;
  }
  auto s = secret_from_fd(fd, what, why);
  ::close(fd);  // read once: the program's own children do not inherit it
  return s;
}

}  // namespace zipper::proto::auth
