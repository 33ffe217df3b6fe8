#include "cli/value_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include "cli/cli_util.h"
#include "common/fd.h"

namespace crescent::cli {
namespace {

Status TooBig(const std::string& name, size_t want, size_t done) {
  std::string size = want > done ? " (" + std::to_string(want) + " bytes)" : "";
  return Status(ErrorCode::kIoError, "cannot hold the value of " + name + size + " in memory (" +
                                         std::to_string(done) + " bytes read so far)");
}

// "64.0 MiB, 67108864 bytes"; "4095 B" when the first part is the count already.
std::string Bytes(uint64_t n) {
  std::string text = FormatBytes(n);
  return text.ends_with(" B") ? text : text + ", " + std::to_string(n) + " bytes";
}

// Reads all of `fd` (called `name` in messages), at most `max_bytes` of it. A
// regular file's size is known up front: one that is too large fails before
// any reading, and its buffer is allocated once (failing that allocation fails
// before any reading too). Past the known size (a pipe, a device, a growing
// file) the buffer grows geometrically but never beyond max_bytes.
StatusOr<std::string> ReadAll(int fd, const std::string& name, uint64_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    return IoError("cannot read " + name, err);
  }
  if (S_ISDIR(st.st_mode)) return IoError("cannot read " + name, EISDIR);
  const uint64_t limit = std::min<uint64_t>(max_bytes, SIZE_MAX / 2);
  std::string data;
  size_t want = 0;  // the regular file's size from here, 0 if unknown
  size_t done = 0;  // bytes of `data` filled
  try {
    if (S_ISREG(st.st_mode)) {
      off_t pos = ::lseek(fd, 0, SEEK_CUR);  // stdin may be partly consumed
      if (pos >= 0 && st.st_size > pos) {
        const uint64_t size = static_cast<uint64_t>(st.st_size - pos);
        if (size > limit) {
          return Status(ErrorCode::kInvalidSize, name + " is " + Bytes(size) +
                                                     ": larger than the largest value the "
                                                     "cluster accepts (" +
                                                     Bytes(max_bytes) + ")");
        }
        want = static_cast<size_t>(size);
      }
      data.resize(want);
    }
    // Past the known size, read through a small buffer, so a file of exactly
    // its st_size needs no second allocation.
    char chunk[64 * 1024];
    for (;;) {
      const bool direct = done < data.size();
      ssize_t n = direct ? ::read(fd, data.data() + done, data.size() - done)
                         : ::read(fd, chunk, sizeof(chunk));
      int err = errno;  // before building a message can change it
      if (n < 0 && err == EINTR) continue;
      if (n < 0) {
        return IoError("cannot read " + name + " after " + std::to_string(done) + " bytes", err);
      }
      if (n == 0) break;  // end of file; sysfs files end before their st_size
      if (!direct) {
        const size_t got = static_cast<size_t>(n);
        if (got > limit - done) {
          return Status(ErrorCode::kInvalidSize,
                        name + " holds more than the largest value the cluster accepts (" +
                            Bytes(max_bytes) + "); stopped reading there");
        }
        if (done + got > data.size()) {
          // A new buffer of exactly the next size: std::string's own growth
          // could double past the bound.
          std::string bigger;
          bigger.reserve(std::min<size_t>(limit, std::max(done + got, 2 * done)));
          bigger.assign(data, 0, done);
          bigger.resize(bigger.capacity());
          data.swap(bigger);
        }
        std::memcpy(data.data() + done, chunk, got);
      }
      done += static_cast<size_t>(n);
    }
  } catch (const std::bad_alloc&) {
    return TooBig(name, want, done);
  } catch (const std::length_error&) {
    return TooBig(name, want, done);
  }
  data.resize(done);
  return data;
}

// Writes all of `data` to `fd` (called `name` in messages).
Status WriteData(int fd, std::string_view data, const std::string& name) {
  if (WriteAll(fd, data)) return Status::Ok();
  const int err = errno;  // before building a message can change it
  return IoError("cannot write " + name, err);
}

// Writes `data` to the open `fd` (then fsyncs it, with `sync`) and closes it;
// close can report a deferred write error (NFS, quota), so it is checked too.
Status WriteAndClose(ScopedFd fd, std::string_view data, const std::string& name,
                     bool sync = false) {
  Status s = WriteData(fd.get(), data, name);
  if (s.ok() && sync && ::fsync(fd.get()) != 0) s = IoError("cannot write " + name, errno);
  if (const int err = fd.Close(); err != 0 && s.ok()) s = IoError("cannot write " + name, err);
  return s;
}

// The process's umask, read without changing it (umask(2) can only set it,
// and gRPC threads are running); 022 if /proc cannot say.
mode_t CurrentUmask() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

// Whether FILE can be replaced by renaming a new file over it without changing
// what a write in place would have done: it is missing, or a regular file of
// ours with one link that we may write (so no permission, owner, hard link or
// sticky-directory rule is bypassed or newly in the way).
bool ReplaceableByRename(const std::string& file, const struct stat& st, bool exists) {
  if (!exists) return true;
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink == 1 &&
         ::faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) == 0;
}

}  // namespace

// Plain write(2)s, not a stream: a small value sits in a stream's buffer until
// close, whose failure (ENOSPC, EIO) a stream destructor would swallow.
//
// A new file, or a regular file of ours (ReplaceableByRename), is written under
// a temporary name in its directory, synced, and renamed over FILE once every
// byte is in, so a get that fails half way (a full disk, a file size limit:
// main() ignores SIGXFSZ so that one is an error too) leaves FILE as it was
// and no partial value behind. Anything else (a device, a FIFO, a symbolic
// link, another user's file, a hard-linked one), and a directory where no
// temporary file can be made, is written in place.
Status WriteValue(const std::string& file, std::string_view data) {
  if (file.empty() || file == "-") return WriteStdout(data);
  struct stat st {};
  const bool exists = ::lstat(file.c_str(), &st) == 0;
  if (ReplaceableByRename(file, st, exists)) {
    std::string tmp = file + ".crescent-XXXXXX";
    ScopedFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (fd.valid()) {
      const mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~CurrentUmask();
      Status s;
      if (::fchmod(fd.get(), mode) == 0) {
        s = WriteAndClose(std::move(fd), data, file, /*sync=*/true);
      } else {
        s = IoError("cannot write " + file, errno);
      }
      if (s.ok() && ::rename(tmp.c_str(), file.c_str()) != 0) {
        s = IoError("cannot write " + file, errno);
      }
      if (!s.ok()) ::unlink(tmp.c_str());
      return s;
    }
  }
  ScopedFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (!fd.valid()) {
    int err = errno;
    return IoError("cannot write " + file, err);
  }
  return WriteAndClose(std::move(fd), data, file);
}

StatusOr<std::string> ReadValue(const std::string& file, uint64_t max_bytes) {
  if (file.empty() || file == "-") return ReadAll(STDIN_FILENO, "stdin", max_bytes);
  const ScopedFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    return IoError("cannot read " + file, err);
  }
  return ReadAll(fd.get(), file, max_bytes);
}

Status WriteStdout(std::string_view text) { return WriteData(STDOUT_FILENO, text, "to stdout"); }

}  // namespace crescent::cli
