#include "auth.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace zipper::proto::auth {
namespace {

static_assert(crypto_box_SEALBYTES + kSecretSize == kSealedSize);
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

std::vector<std::byte> transcript(const ChallengePayload& c, const Fingerprint& f,
                                  const ConnectHello& who) {
  static constexpr std::string_view kLabel = "zipper-auth-v1";
  std::vector<std::byte> t;
  t.reserve(kLabel.size() + kChallengeSize + kFingerprintSize + 20);
  for (char ch : kLabel) t.push_back(std::byte(ch));
  put(t, c.nonce);
  put(t, c.server_key);
  put(t, f);
  put_u64(t, who.job_id);
  put_u32(t, who.vrank);
  put_u32(t, who.np_low);
  put_u32(t, who.np_high);
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
  v.reserve(kAuthFixedSize + a.munge_cred.size());
  put(v, a.fingerprint);
  put(v, a.tag);
  put(v, a.sealed_secret);
  put_u32(v, static_cast<std::uint32_t>(a.munge_cred.size()));
  for (char ch : a.munge_cred) v.push_back(std::byte(ch));
  return v;
}

bool decode_auth(std::span<const std::byte> in, AuthPayload* out) {
  if (in.size() < kAuthFixedSize) return false;
  const std::byte* p = in.data();
  std::memcpy(out->fingerprint.data(), p, kFingerprintSize);
  p += kFingerprintSize;
  std::memcpy(out->tag.data(), p, kTagSize);
  p += kTagSize;
  std::memcpy(out->sealed_secret.data(), p, kSealedSize);
  p += kSealedSize;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= std::uint32_t(p[i]) << (8 * i);
  p += 4;
  if (n > kMaxMungeCred || in.size() - kAuthFixedSize != n) return false;
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

Fingerprint fingerprint(const Secret& s) { return derive<kFingerprintSize>(s, "zipper-job-fp"); }

std::uint64_t job_id_from_secret(const Secret& s) {
  const auto b = derive<8>(s, "zipper-job-id");
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id |= std::uint64_t(b[i]) << (8 * i);
  return id;
}

std::string log_name(const Fingerprint& f) { return to_hex(std::span(f).first(4)); }

Key auth_key(const Secret& s) { return derive<kKeySize>(s, "zipper-auth-key"); }

Tag make_tag(const Key& key, const ChallengePayload& c, const Fingerprint& f,
             const ConnectHello& who) {
  const auto t = transcript(c, f, who);
  Tag tag;
  crypto_auth(u8(tag.data()), u8(t.data()), t.size(), u8(key.data()));
  return tag;
}

bool check_tag(const Key& key, const Tag& tag, const ChallengePayload& c, const Fingerprint& f,
               const ConnectHello& who) {
  const auto t = transcript(c, f, who);
  return crypto_auth_verify(u8(tag.data()), u8(t.data()), t.size(), u8(key.data())) == 0;
}

KeyPair::KeyPair() {
  init();
  crypto_box_keypair(u8(pk_.data()), u8(sk_.data()));
}

KeyPair::~KeyPair() { sodium_memzero(sk_.data(), sk_.size()); }

std::optional<Secret> KeyPair::open(const Sealed& box) const {
  Secret s;
  if (crypto_box_seal_open(u8(s.data()), u8(box.data()), box.size(), u8(pk_.data()),
                           u8(sk_.data())) != 0)
    return std::nullopt;
  return s;
}

Sealed seal(const Secret& s, const Key& server_key) {
  init();
  Sealed box;
  crypto_box_seal(u8(box.data()), u8(s.data()), s.size(), u8(server_key.data()));
  return box;
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

std::optional<Secret> read_secret_file(const std::string& path, std::string* why) {
  struct OwnedFd {
    int fd;
    ~OwnedFd() {
      if (fd >= 0) ::close(fd);
    }
  } file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  const int fd = file.fd;
  if (fd < 0) {
    *why = "cannot open secret file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  char buf[256];
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) == 0)
    n = ::read(fd, buf, sizeof buf);
  else
    *why = "secret file " + path + " must be a regular file owned by this user with mode 0600";
  if (n < 0) {
    if (why->empty()) *why = "cannot read secret file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string_view text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  auto s = parse_secret(text, why);
  if (!s) *why = "secret file " + path + ": " + *why;
  sodium_memzero(buf, sizeof buf);
  return s;
}

}  // namespace zipper::proto::auth
