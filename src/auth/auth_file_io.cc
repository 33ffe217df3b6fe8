#include "auth/auth_file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/fd.h"

namespace crescent::auth {
namespace {

std::string ModeText(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Reads the open file `fd` (checked first: a regular file, owner-only, not too
// large) into a string; `what` names it in messages ("auth file").
StatusOr<std::string> ReadChecked(int fd, const std::string& path, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError("cannot stat " + what, path, errno);
  if (!S_ISREG(st.st_mode)) {
    return Status(ErrorCode::kInvalidArgument, what + " '" + path + "' is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  what + " '" + path + "' has mode " + ModeText(st.st_mode) +
                      ": others than its owner may read or change it; refused (chmod 600 " + path +
                      ")");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxAuthFileBytes) {
    return Status(ErrorCode::kInvalidArgument, what + " '" + path + "' is larger than " +
                                                   std::to_string(kMaxAuthFileBytes >> 20) +
                                                   " MiB: not an " + what);
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + what, path, errno);
    if (n == 0) break;  // shrank meanwhile: what is there is parsed, and refused if cut
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

StatusOr<AuthFile> ParseNamed(const std::string& text, const std::string& path) {
  StatusOr<AuthFile> file = ParseAuthFile(text);
  if (!file.ok()) {
    return Status(ErrorCode::kCorruptData,
                  "auth file '" + path + "' is corrupt: " + file.status().message());
  }
  return file;
}

Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  ScopedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return IoError("cannot create", tmp, errno);
  // A FILE.tmp left by a crash keeps its mode through O_TRUNC.
  if (::fchmod(fd.get(), 0600) != 0) return IoError("cannot chmod", tmp, errno);
  if (!WriteAll(fd.get(), text)) return IoError("cannot write", tmp, errno);
  if (::fsync(fd.get()) != 0) return IoError("cannot fsync", tmp, errno);
  if (int err = fd.Close(); err != 0) return IoError("cannot close", tmp, err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return IoError("cannot rename " + tmp + " to", path, err);
  }
  return SyncDir(DirOf(path));
}

}  // namespace

StatusOr<std::string> ReadOwnerOnlyFile(const std::string& path, const std::string& what) {
  const ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return IoError("cannot open " + what, path, errno);
  return ReadChecked(fd.get(), path, what);
}

StatusOr<AuthFile> LoadAuthFile(const std::string& path) {
  StatusOr<std::string> text = ReadOwnerOnlyFile(path, "auth file");
  if (!text.ok()) return text.status();
  return ParseNamed(*text, path);
}

InternalUser InternalNodeUser(const Token& token) {
  return {token.name, UserEntry{Role::kNode, "", MakeVerifier(token.secret, RandomKey())}};
}

StatusOr<std::shared_ptr<const ServerCredentials>> LoadServerCredentials(
    const std::string& path, const InternalUser* internal, const Key& mock_key) {
  StatusOr<AuthFile> file = LoadAuthFile(path);
  if (!file.ok()) return file.status();
  if (internal != nullptr) {
    if (Status s = file->AddUser(internal->name, internal->entry); !s.ok()) {
      return Status(ErrorCode::kInvalidArgument, "auth file '" + path +
                                                     "' cannot take this process's own node "
                                                     "token: " +
                                                     s.message());
    }
  }
  return std::make_shared<const ServerCredentials>(std::move(*file), mock_key);
}

Status UpdateAuthFile(const std::string& path, bool create,
                      const std::function<Status(AuthFile&)>& edit) {
  const std::string lock_path = path + ".lock";
  // O_NOFOLLOW here and on FILE.tmp: a link planted beside the file cannot
  // redirect the write.
  const ScopedFd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock.valid()) return IoError("cannot open lock file", lock_path, errno);
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return IoError("cannot lock", lock_path, errno);
  }
  AuthFile file;
  const ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.valid()) {
    StatusOr<std::string> text = ReadChecked(fd.get(), path, "auth file");
    if (!text.ok()) return text.status();
    StatusOr<AuthFile> parsed = ParseNamed(*text, path);
    if (!parsed.ok()) return parsed.status();
    file = std::move(*parsed);
  } else if (errno != ENOENT || !create) {
    return IoError("cannot open auth file", path, errno);
  }
  if (Status s = edit(file); !s.ok()) return s;
  return WriteAtomically(path, FormatAuthFile(file));
}

}  // namespace crescent::auth
