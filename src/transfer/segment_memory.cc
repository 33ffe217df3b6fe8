#include "transfer/segment_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace crescent::transfer {

StatusOr<std::unique_ptr<SegmentMemory>> SegmentMemory::Create(const std::string& name,
                                                               uint64_t size) {
  if (size == 0) return Status(ErrorCode::kInvalidArgument, "segment size must be positive");
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    return Status(ErrorCode::kIoError,
                  "memfd_create(" + name + ") failed: " + std::strerror(errno));
  }
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    close(fd);
    return Status(ErrorCode::kNoSpace, "ftruncate of segment " + name + " to " +
                                           std::to_string(size) +
                                           " bytes failed: " + std::strerror(err));
  }
  // Reserve every page now: a sparse memfd would raise SIGBUS on the first write
  // the machine cannot back, long after startup; fallocate fails here instead.
  // MAP_POPULATE then maps the pages, so no transfer pays a first-touch fault.
  int rc;
  do {
    rc = fallocate(fd, 0, 0, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    close(fd);
    return Status(ErrorCode::kNoSpace, "cannot reserve " + std::to_string(size) +
                                           " bytes for segment " + name + ": " +
                                           std::strerror(err));
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    return Status(ErrorCode::kNoSpace, "mmap of segment " + name + " (" + std::to_string(size) +
                                           " bytes) failed: " + std::strerror(err));
  }
  return std::unique_ptr<SegmentMemory>(new SegmentMemory(fd, static_cast<std::byte*>(p), size));
}

SegmentMemory::~SegmentMemory() {
  munmap(data_, size_);
  close(fd_);
}

StatusOr<std::byte*> SegmentMemory::Resolve(const Capability& cap, AccessOp op,
                                            const CapabilitySigner& signer,
                                            int64_t now_unix_ms) const {
  uint32_t current = id();
  if (current == 0) {
    return Status(ErrorCode::kSegmentNotFound, "segment is not mounted (no id yet)");
  }
  if (cap.segment != current) {
    return Status(ErrorCode::kSegmentNotFound,
                  "capability names segment " + std::to_string(cap.segment) +
                      ", this node serves segment " + std::to_string(current));
  }
  // Written as two comparisons so offset + length cannot overflow.
  if (cap.length == 0 || cap.offset > size_ || cap.length > size_ - cap.offset) {
    return Status(ErrorCode::kInvalidArgument,
                  "range [" + std::to_string(cap.offset) + ", +" + std::to_string(cap.length) +
                      ") is empty or outside segment " + std::to_string(current) + " of " +
                      std::to_string(size_) + " bytes");
  }
  if (Status s = signer.Verify(binding_, cap, op, now_unix_ms); !s.ok()) return s;
  return data_ + cap.offset;
}

}  // namespace crescent::transfer
