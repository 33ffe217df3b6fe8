#include "common/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace crescent {

void ScopedFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int ScopedFd::Close() {
  if (fd_ < 0) return 0;
  const int rc = ::close(std::exchange(fd_, -1));
  return rc == 0 ? 0 : errno;
}

bool WriteAll(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

Status SyncDir(const std::string& dir) {
  const ScopedFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return IoError("cannot open directory", dir, errno);
  if (::fsync(fd.get()) != 0) return IoError("cannot sync directory", dir, errno);
  return Status::Ok();
}

Status IoError(std::string_view what, int err) {
  std::string text(what);
  text += ": ";
  text += std::generic_category().message(err);
  return Status(ErrorCode::kIoError, std::move(text));
}

Status IoError(std::string_view what, std::string_view path, int err) {
  std::string text(what);
  text += " '";
  text += path;
  text += "'";
  return IoError(text, err);
}

}  // namespace crescent
