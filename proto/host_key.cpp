#include "host_key.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "unique_fd.h"

namespace zipper::proto::auth {
namespace {

const unsigned char* u8(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* u8(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

std::optional<Key> parse_key(std::string_view hex) {
  Key k;
  std::size_t len = 0;
  hex = trim(hex);
  if (hex.size() != 2 * kKeySize ||
      sodium_hex2bin(u8(k.data()), k.size(), hex.data(), hex.size(), nullptr, &len, nullptr) != 0 ||
      len != kKeySize)
    return std::nullopt;
  return k;
}

// The key file's directory: no other user may replace entries in it (owned
// by us or root, and not group/world-writable unless sticky, where only an
// entry's owner may rename or remove it).
bool directory_is_safe(const std::string& path, std::string* why) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    *why = sys_error("host key directory " + dir);
    return false;
  }
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if ((st.st_uid != ::geteuid() && st.st_uid != 0) || (others_write && !(st.st_mode & S_ISVTX))) {
    *why = "host key directory " + dir +
           " may be written by other users: keep the key in a private directory "
           "(e.g. /etc/zipper, owned by root, mode 0755)";
    return false;
  }
  return true;
}

bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// PATH.pub: replaces only a regular file of ours (never follows a link).
bool write_public(const std::string& path, const Key& pk, std::string* why) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
      *why = path + " exists and is not a regular file of this user: not replacing it";
      return false;
    }
    ::unlink(path.c_str());
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd || ::fchmod(fd.get(), 0644) != 0 || !write_all(fd.get(), to_hex(pk) + "\n")) {
    *why = sys_error("cannot write " + path);
    return false;
  }
  return true;
}

}  // namespace

HostKey::HostKey() {
  init();
  crypto_box_keypair(u8(pk_.data()), u8(sk_.data()));
}

HostKey::~HostKey() { sodium_memzero(sk_.data(), sk_.size()); }

std::optional<Key> HostKey::open(const Sealed& box) const {
  Key k;
  if (crypto_box_seal_open(u8(k.data()), u8(box.data()), box.size(), u8(pk_.data()),
                           u8(sk_.data())) != 0)
    return std::nullopt;
  return k;
}

std::optional<Key> HostKey::link_key(const Key& peer, bool dialer) const {
  Key rx, tx;
  const int rc =
      dialer ? crypto_kx_client_session_keys(u8(rx.data()), u8(tx.data()), u8(pk_.data()),
                                             u8(sk_.data()), u8(peer.data()))
             : crypto_kx_server_session_keys(u8(rx.data()), u8(tx.data()), u8(pk_.data()),
                                             u8(sk_.data()), u8(peer.data()));
  if (rc != 0) return std::nullopt;
  // The dialer's sending key is the listener's receiving key: one key for both.
  return dialer ? tx : rx;
}

std::unique_ptr<HostKey> HostKey::load(const std::string& path, std::string* why) {
  init();
  if (!directory_is_safe(path, why)) return nullptr;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    *why = errno == ELOOP ? "host key " + path + " is a symbolic link: refusing it"
                          : sys_error("cannot open host key " + path);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0) {
    *why = "host key " + path + " must be a regular file owned by uid " +
           std::to_string(::geteuid()) + " with mode 0600 (no group or world access)";
    return nullptr;
  }
  char buf[256];
  ssize_t n = -1;
  do n = ::read(fd.get(), buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    *why = sys_error("cannot read host key " + path);
    return nullptr;
  }
  auto sk = parse_key(std::string_view(buf, static_cast<std::size_t>(n)));
  sodium_memzero(buf, sizeof buf);
  if (!sk) {
    *why = "host key " + path + " must hold 64 hex digits (a private X25519 key)";
    return nullptr;
  }
  auto key = std::make_unique<HostKey>();
  key->sk_ = *sk;
  sodium_memzero(sk->data(), sk->size());
  crypto_scalarmult_base(u8(key->pk_.data()), u8(key->sk_.data()));
  return key;
}

std::unique_ptr<HostKey> HostKey::load_or_create(const std::string& path, bool* created,
                                                 std::string* why) {
  *created = false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return load(path, why);
  if (!directory_is_safe(path, why)) return nullptr;
  auto key = std::make_unique<HostKey>();
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    // Another starter won the race: use its key (load checks it).
    if (errno == EEXIST) return load(path, why);
    *why = sys_error("cannot create host key " + path);
    return nullptr;
  }
  std::string text = to_hex(key->sk_) + "\n";
  const bool ok =
      ::fchmod(fd.get(), 0600) == 0 && write_all(fd.get(), text) && ::fsync(fd.get()) == 0;
  sodium_memzero(text.data(), text.size());
  if (!ok) {
    *why = sys_error("cannot write host key " + path);
    ::unlink(path.c_str());
    return nullptr;
  }
  if (!write_public(path + ".pub", key->pk_, why)) return nullptr;
  *created = true;
  return key;
}

std::optional<Key> parse_public_key(std::string_view hex, std::string* why) {
  auto k = parse_key(hex);
  if (!k) *why = "a public key must be 64 hex digits, got '" + std::string(trim(hex)) + "'";
  return k;
}

}  // namespace zipper::proto::auth
