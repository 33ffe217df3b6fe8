// DataDirLock: one master per data dir. Two masters appending to one log, or
// one rotating the other's snapshots, would each drop what the other
// acknowledged. The lock is an exclusive flock on DIR/LOCK held for the
// process's life (the kernel releases it when the process ends, kill -9
// included, so a crash never leaves it stale); the holder writes its PID into
// the file, which the refusal names.
#pragma once

#include <string>

#include "common/fd.h"
#include "crescent/status.h"

namespace crescent::durability {

class DataDirLock {
 public:
  // Creates `dir` if needed and takes its lock; kUnavailable naming the
  // holder's PID when another process has it.
  static StatusOr<DataDirLock> Acquire(const std::string& dir);
  DataDirLock(DataDirLock&& o) noexcept = default;
  DataDirLock& operator=(DataDirLock&&) = delete;
  DataDirLock(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(ScopedFd fd) : fd_(std::move(fd)) {}
  ScopedFd fd_;  // closing it releases the flock
};

}  // namespace crescent::durability
