#include "munge.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef ZIPPER_HAVE_MUNGE
#include <munge.h>
#endif

namespace zipper::proto::auth {

#ifdef ZIPPER_HAVE_MUNGE

MungeVerifier::MungeVerifier(std::string socket) : socket_(std::move(socket)) {
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx == nullptr) throw std::runtime_error("munge_ctx_create failed");
  if (!socket_.empty() && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket_.c_str()) != EMUNGE_SUCCESS) {
    const std::string why = munge_ctx_strerror(ctx);
    munge_ctx_destroy(ctx);
    throw std::runtime_error("munge socket " + socket_ + ": " + why);
  }
  ctx_ = ctx;
}

MungeVerifier::~MungeVerifier() { munge_ctx_destroy(static_cast<munge_ctx_t>(ctx_)); }

std::optional<std::uint32_t> MungeVerifier::verify(const std::string& cred, const Nonce& nonce,
                                                   std::string* why) const {
  void* buf = nullptr;
  int len = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // munge_decode takes a context that it may modify; one per call keeps
  // concurrent sides independent.
  munge_ctx_t ctx = munge_ctx_copy(static_cast<munge_ctx_t>(ctx_));
  const munge_err_t e = munge_decode(cred.c_str(), ctx, &buf, &len, &uid, &gid);
  munge_ctx_destroy(ctx);
  const bool same = buf != nullptr && len == static_cast<int>(nonce.size()) &&
                    std::memcmp(buf, nonce.data(), nonce.size()) == 0;
  std::free(buf);
  if (e != EMUNGE_SUCCESS) {
    *why = std::string("MUNGE credential refused: ") + munge_strerror(e);
    return std::nullopt;
  }
  if (!same) {
    *why = "MUNGE credential was made for another connection";
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(uid);
}

std::optional<std::string> munge_credential(const Nonce& nonce, const std::string& socket,
                                            std::string* why) {
  char* cred = nullptr;
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx != nullptr && !socket.empty()) munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
  const munge_err_t e = munge_encode(&cred, ctx, nonce.data(), static_cast<int>(nonce.size()));
  if (ctx != nullptr) munge_ctx_destroy(ctx);
  if (e != EMUNGE_SUCCESS) {
    *why = std::string("cannot get a MUNGE credential: ") + munge_strerror(e);
    std::free(cred);
    return std::nullopt;
  }
  std::string out(cred);
  std::free(cred);
  return out;
}

#else

MungeVerifier::MungeVerifier(std::string socket) : socket_(std::move(socket)) {
  throw std::runtime_error("--auth munge: zipperd was built without libmunge (libmunge-dev)");
}
MungeVerifier::~MungeVerifier() = default;
std::optional<std::uint32_t> MungeVerifier::verify(const std::string&, const Nonce&,
                                                   std::string* why) const {
  *why = "built without libmunge";
  return std::nullopt;
}
std::optional<std::string> munge_credential(const Nonce&, const std::string&, std::string* why) {
  *why = "zipperd asks for a MUNGE credential but libmmpi was built without libmunge";
  return std::nullopt;
}

#endif

}  // namespace zipper::proto::auth
