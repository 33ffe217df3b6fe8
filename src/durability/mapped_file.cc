#include "durability/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/fd.h"

namespace crescent::durability {

StatusOr<MappedFile> MappedFile::Open(const std::string& path, const std::string& what) {
  auto fail = [&](const char* verb, int err) {
    return IoError(std::string(verb) + " " + what, path, err);
  };
  // Closed on return: the mapping keeps the file's pages.
  const ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return fail("cannot open", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail("cannot stat", errno);
  MappedFile out;
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (p == MAP_FAILED) return fail("cannot map", errno);
    ::madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    out.base_ = static_cast<const char*>(p);
    out.size_ = static_cast<size_t>(st.st_size);
  }
  return out;
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    Close();
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Close(); }

void MappedFile::Close() {
  if (base_ != nullptr) ::munmap(const_cast<char*>(base_), size_);
  base_ = nullptr;
  size_ = 0;
}

}  // namespace crescent::durability
