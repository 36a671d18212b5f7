#include "pid_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "../proto/unique_fd.h"

namespace zipper::forwarder {
namespace {

std::runtime_error failure(const std::string& path, const std::string& why) {
  return std::runtime_error("pid file " + path + ": " + why);
}

}  // namespace

PidFile::PidFile(std::string path) : path_(std::move(path)) {
  proto::UniqueFd fd;
  for (int attempt = 0; attempt < 2 && !fd; ++attempt) {
    fd = proto::UniqueFd(
        ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd) break;
    if (errno != EEXIST) throw failure(path_, std::strerror(errno));
    struct stat st {};
    if (attempt > 0 || ::lstat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid())
      throw failure(path_,
                    "exists and is not a stale pid file of this user (a symlink, another "
                    "user's file, or it came back): refusing to write through it; use a private "
                    "directory such as /run/zipper");
    ::unlink(path_.c_str());  // ours, from a run that did not remove it
  }
  const std::string text = std::to_string(::getpid()) + "\n";
  struct stat st {};
  if (::fchmod(fd.get(), 0644) != 0 ||
      ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::fstat(fd.get(), &st) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(path_.c_str());
    throw failure(path_, why);
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
}

PidFile::~PidFile() {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_)
    ::unlink(path_.c_str());
}

}  // namespace zipper::forwarder
