// MappedFile: a whole file's bytes, read-only, mapped rather than copied.
//
// A restore reads every log file and snapshot once, front to back. Copying
// them into a fresh buffer costs a page fault per 4 KiB of new memory and a
// copy of every byte; a mapping of the page cache (populated at once) costs
// neither. The bytes are the file as it was at Open: appends after it are not
// seen, and the file must not be truncated while mapped (reading a page past
// the new end would fault). Unlinking it is fine.
#pragma once

#include <string>
#include <string_view>

#include "crescent/status.h"

namespace crescent::durability {

class MappedFile {
 public:
  // Errors name the file as `what` (e.g. "log file") and its path.
  static StatusOr<MappedFile> Open(const std::string& path, const std::string& what);
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Empty for an empty file.
  std::string_view data() const { return {base_, size_}; }
  // Unmaps now (data() is empty from then on).
  void Close();

 private:
  MappedFile() = default;

  const char* base_ = nullptr;  // nullptr when size_ == 0
  size_t size_ = 0;
};

}  // namespace crescent::durability
