#include "durability/snapshot_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/fd.h"

namespace crescent::durability {
namespace {

Status CopyError(const std::string& path, const std::string& what, int err) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(err));
}

}  // namespace

StatusOr<SnapshotInfo> CopySnapshot(const std::string& dir, const SnapshotPartFn& read) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status(ErrorCode::kIoError, "cannot create data dir '" + dir + "': " + ec.message());
  const std::string temp = (std::filesystem::path(dir) / "snapshot-copy.tmp").string();
  ScopedFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return CopyError(temp, "cannot create", errno);
  auto fail = [&](Status s) -> StatusOr<SnapshotInfo> {
    ::unlink(temp.c_str());
    return s;
  };
  uint64_t position = 0, file_bytes = 0, offset = 0;
  std::string data;
  for (bool first = true;; first = false) {
    uint64_t p = 0, size = 0;
    if (Status s = read(offset, &p, &size, &data); !s.ok()) return fail(s);
    if (!first && (p != position || size != file_bytes)) {
      return fail(Status(ErrorCode::kCorruptData,
                         "the snapshot being copied changed mid-copy (position " +
                             std::to_string(position) + " of " + std::to_string(file_bytes) +
                             " bytes, then " + std::to_string(p) + " of " + std::to_string(size) +
                             ")"));
    }
    position = p;
    file_bytes = size;
    if (data.empty()) break;
    if (!WriteAll(fd.get(), data)) return fail(CopyError(temp, "cannot write", errno));
    offset += data.size();
  }
  if (offset != file_bytes) {
    return fail(Status(ErrorCode::kCorruptData, "the snapshot copy ended at byte " +
                                                    std::to_string(offset) + " of " +
                                                    std::to_string(file_bytes) + " (position " +
                                                    std::to_string(position) + ")"));
  }
  if (::fsync(fd.get()) != 0) return fail(CopyError(temp, "cannot sync", errno));
  fd.reset();
  StatusOr<SnapshotInfo> checked = CheckSnapshot(temp);
  if (!checked.ok()) return fail(checked.status());
  if (checked->log_position != position) {
    return fail(Status(ErrorCode::kCorruptData, "the snapshot copied says position " +
                                                    std::to_string(checked->log_position) +
                                                    ", its source " + std::to_string(position)));
  }
  const std::string final_path = SnapshotPath(dir, position);
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    return fail(CopyError(temp, "cannot rename", errno));
  }
  if (Status s = SyncDir(dir); !s.ok()) return s;
  checked->path = final_path;
  return checked;
}

}  // namespace crescent::durability
