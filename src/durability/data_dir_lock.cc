#include "durability/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace crescent::durability {

StatusOr<DataDirLock> DataDirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status(ErrorCode::kIoError, "cannot create data dir '" + dir + "': " + ec.message());
  }
  const std::string path = (std::filesystem::path(dir) / "LOCK").string();
  ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) return IoError("cannot open the data dir's lock", path, errno);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(fd.get(), pid, sizeof pid - 1, 0);
    fd.reset();
    if (err != EWOULDBLOCK) return IoError("cannot lock", path, err);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return Status(ErrorCode::kUnavailable,
                  "data dir '" + dir + "' is in use by another master (pid " +
                      (holder.empty() ? std::string("unknown") : holder) +
                      "): one master per data dir; stop that one first or give another --data-dir");
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd.get(), 0) != 0 ||
      ::pwrite(fd.get(), me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    return IoError("cannot write", path, errno);
  }
  return DataDirLock(std::move(fd));
}

}  // namespace crescent::durability
