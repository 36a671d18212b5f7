#include "forwarder_pins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "../proto/host_key.h"
#include "../proto/unique_fd.h"
#include "environment.h"

#ifndef ZIPPER_SITE_KNOWN_FORWARDERS
#define ZIPPER_SITE_KNOWN_FORWARDERS "/etc/zipper/known_forwarders"
#endif

namespace zipper::client {

const char* const kSiteKnownForwarders = ZIPPER_SITE_KNOWN_FORWARDERS;

namespace {

std::string without_scheme(const std::string& address) {
  for (const char* scheme : {"tcp:", "verbs:"})
    if (address.rfind(scheme, 0) == 0) return address.substr(std::strlen(scheme));
  return address;
}

// The file's text; nullopt and *why when it cannot be read or others may
// write it (a key anyone can replace pins nothing). `missing_ok`: a file that
// does not exist gives "".
std::optional<std::string> read_key_file(const std::string& path, bool missing_ok,
                                         std::string* why) {
  proto::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (missing_ok && errno == ENOENT) return std::string();
    *why = "cannot open known forwarders file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      (st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    *why = "known forwarders file " + path +
           " must be a regular file owned by you or root that no one else may write";
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = "cannot read known forwarders file " + path + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (1u << 20)) {
      *why = "known forwarders file " + path + " is larger than 1 MiB";
      return std::nullopt;
    }
  }
  return text;
}

}  // namespace

std::optional<proto::auth::Key> ForwarderPins::lookup(const std::string& address,
                                                      std::size_t index) const {
  if (index < by_index.size()) return by_index[index];
  auto it = by_address.find(without_scheme(address));
  if (it != by_address.end()) return it->second;
  return std::nullopt;
}

std::optional<std::map<std::string, proto::auth::Key>> parse_known_forwarders(
    const std::string& text, const std::string& source, std::string* why) {
  std::map<std::string, proto::auth::Key> out;
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string hosts, key, extra;
    if (!(fields >> hosts)) continue;  // blank or comment
    std::string key_why;
    const auto where = source + ":" + std::to_string(no);
    if (!(fields >> key) || (fields >> extra)) {
      *why = where + ": expected 'HOST:PORT[,HOST:PORT...] PUBKEY'";
      return std::nullopt;
    }
    auto k = proto::auth::parse_public_key(key, &key_why);
    if (!k) {
      *why = where + ": " + key_why;
      return std::nullopt;
    }
    std::istringstream list(hosts);
    for (std::string host; std::getline(list, host, ',');)
      if (!host.empty()) out[without_scheme(host)] = *k;
  }
  return out;
}

std::optional<ForwarderPins> pins_from_env(std::size_t n_addresses, std::string* why) {
  return pins_from(Environment::capture(), n_addresses, why);
}

std::optional<ForwarderPins> pins_from(const Environment& env, std::size_t n_addresses,
                                       std::string* why) {
  ForwarderPins pins;
  if (const char* keys = env.get("MMPI_FORWARDER_KEYS"); keys && *keys) {
    std::istringstream list(keys);
    for (std::string item; std::getline(list, item, ',');) {
      std::string key_why;
      auto k = proto::auth::parse_public_key(item, &key_why);
      if (!k) {
        *why = "MMPI_FORWARDER_KEYS: " + key_why;
        return std::nullopt;
      }
      pins.by_index.push_back(*k);
    }
    if (pins.by_index.size() != n_addresses) {
      *why = "MMPI_FORWARDER_KEYS has " + std::to_string(pins.by_index.size()) + " keys for " +
             std::to_string(n_addresses) +
             " addresses in MMPI_FORWARDER (one key per address, in the same order)";
      return std::nullopt;
    }
  }
  const char* known = env.get("MMPI_KNOWN_FORWARDERS");
  const bool given = known != nullptr && *known != '\0';
  const std::string path = given ? known : kSiteKnownForwarders;
  auto text = read_key_file(path, !given, why);
  if (!text) return std::nullopt;
  if (!text->empty()) {
    auto map = parse_known_forwarders(*text, path, why);
    if (!map) return std::nullopt;
    pins.by_address = std::move(*map);
    pins.known_file = path;
  }
  const char* check = env.get("MMPI_FORWARDER_KEY_CHECK");
  if (check == nullptr || *check == '\0') {
    pins.strict = true;  // secure by default: never StrictHostKeyChecking=no
  } else if (std::strcmp(check, "strict") == 0 || std::strcmp(check, "accept") == 0) {
    pins.strict = std::strcmp(check, "strict") == 0;
  } else {
    *why =
        std::string("MMPI_FORWARDER_KEY_CHECK must be 'strict' or 'accept', got '") + check + "'";
    return std::nullopt;
  }
  return pins;
}

}  // namespace zipper::client
