#include "transfer/segment_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace crescent::transfer {
namespace {

Status Errno(const char* what, int err) {
  return Status(ErrorCode::kIoError, std::string(what) + ": " + std::strerror(err));
}

}  // namespace

StatusOr<std::unique_ptr<SegmentMemory>> SegmentMemory::Create(const std::string& name,
                                                               uint64_t size) {
  if (size == 0) return Status(ErrorCode::kInvalidArgument, "segment size must be > 0");
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return Errno("memfd_create", errno);
  int rc;
  do {
    rc = ftruncate(fd, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    close(fd);
    return Errno("ftruncate", err);
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    return Errno("mmap", err);
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
  if (current == 0 || cap.segment != current) {
    return Status(ErrorCode::kSegmentNotFound, "capability names segment " +
                                                   std::to_string(cap.segment) +
                                                   ", this node holds " + std::to_string(current));
  }
  // Written as two comparisons so offset + length cannot wrap.
  if (cap.length == 0 || cap.offset > size_ || cap.length > size_ - cap.offset) {
    return Status(ErrorCode::kInvalidArgument,
                  "range [" + std::to_string(cap.offset) + ", +" + std::to_string(cap.length) +
                      ") is empty or outside the segment of " + std::to_string(size_) + " bytes");
  }
  if (Status s = signer.Verify(binding(), cap, op, now_unix_ms); !s.ok()) return s;
  return data_ + cap.offset;
}

}  // namespace crescent::transfer
