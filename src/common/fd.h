// File descriptors: ScopedFd owns one, WriteAll writes all of a buffer to one,
// and IoError is the one way an I/O failure becomes a Status.
//
// ScopedFd closes what it holds when it goes, so an early return cannot leak
// a descriptor. close() is never retried on EINTR: Linux releases the
// descriptor whatever close returns, and a retry could close one that another
// thread has opened meanwhile.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "crescent/status.h"

namespace crescent {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& o) noexcept : fd_(o.release()) {}
  ScopedFd& operator=(ScopedFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Hands the descriptor over without closing it.
  int release() { return std::exchange(fd_, -1); }
  // Closes the descriptor held, if any, and holds `fd` instead.
  void reset(int fd = -1);
  // Closes now and says how that went: 0, or the errno close() reported (a
  // write error some filesystems report only there). Holds none afterwards.
  int Close();

 private:
  int fd_ = -1;
};

// Writes all `n` bytes at `data` to the blocking descriptor `fd`, retrying
// short writes and EINTR. True once every byte is written; false when a write
// failed, with errno saying why (EIO for one that wrote nothing and named no
// error).
bool WriteAll(int fd, const void* data, size_t n);
inline bool WriteAll(int fd, std::string_view data) {
  return WriteAll(fd, data.data(), data.size());
}

// fsyncs the directory `dir`, so that the names made or removed in it last.
Status SyncDir(const std::string& dir);

// kIoError "WHAT: <what errno `err` means>".
Status IoError(std::string_view what, int err);
// kIoError "WHAT 'PATH': <what errno `err` means>".
Status IoError(std::string_view what, std::string_view path, int err);

}  // namespace crescent
