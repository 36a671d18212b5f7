// zipperd's pid file, safe in a directory others may write to: created
// with O_CREAT|O_EXCL|O_NOFOLLOW, so a planted symlink or file is never
// written through; removed at exit only if it is still ours.
#pragma once

#include <sys/types.h>

#include <string>

namespace zipper::forwarder {

class PidFile {
 public:
  /// Writes this process's pid to `path`. A file already there is replaced
  /// only when it is a regular file of this user (a stale one of ours);
  /// anything else (another user's file, a symlink, a directory) is refused.
  /// Throws std::runtime_error naming the path and the reason.
  explicit PidFile(std::string path);
  /// Removes the file if it is still the one written (same device and inode).
  ~PidFile();
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

 private:
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace zipper::forwarder
