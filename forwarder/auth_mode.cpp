// Probing munged for --auth auto (auth_mode.h).
#include "auth_mode.h"

#include <sys/stat.h>

#include <exception>

#include "../proto/munge.h"

namespace zipper::forwarder {

namespace {
// libmunge's compiled-in default (Debian's munge package).
constexpr const char* kDefaultMungeSocket = "/run/munge/munge.socket.2";
}  // namespace

MungeProbe probe_munge(const std::string& socket) {
  MungeProbe p;
  const std::string path = socket.empty() ? kDefaultMungeSocket : socket;
  struct stat st {};
  // Checked first: libmunge retries a missing socket for seconds.
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    p.why = "no munged socket at " + path;
    return p;
  }
  try {
    const proto::auth::Nonce nonce = proto::auth::random_nonce();
    std::string why;
    const auto cred = proto::auth::munge_credential(nonce, socket, &why);
    if (!cred) {
      p.why = why;
      return p;
    }
    const proto::auth::MungeVerifier verifier(socket);
    if (!verifier.verify(*cred, nonce, &why)) {
      p.why = why;
      return p;
    }
  } catch (const std::exception& e) {  // built without libmunge
    p.why = e.what();
    return p;
  }
  p.usable = true;
  return p;
}

}  // namespace zipper::forwarder
