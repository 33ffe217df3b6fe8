#include "transfer/segment_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/host_memory.h"

namespace crescent::transfer {

namespace {

// "107374182400 bytes (100.0 GiB)"
std::string DescribeBytes(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + FormatGib(bytes) + ")";
}

}  // namespace

StatusOr<std::unique_ptr<SegmentMemory>> SegmentMemory::Create(const std::string& name,
                                                               uint64_t size) {
  if (size == 0) return Status(ErrorCode::kInvalidArgument, "segment size must be positive");
  // Refuse, before anything is allocated, a segment larger than the host can
  // give. fallocate below does not fail for a memfd (shmem) when memory runs
  // out: it keeps allocating until the kernel's OOM killer ends processes, often
  // others first (unmapped memfd pages do not count in this process's OOM
  // score). This is a check at start, not a reservation: memory taken by others
  // between here and the fallocate is not accounted for, and no margin is kept,
  // so a segment of nearly all the available memory passes and leaves the host
  // short. Where the figure cannot be read (no /proc), the check is skipped.
  if (std::optional<AvailableMemory> available = AvailableSegmentMemory();
      available && size > available->bytes) {
    return Status(ErrorCode::kNoSpace, "segment " + name + " needs " + DescribeBytes(size) +
                                           " but only " + DescribeBytes(available->bytes) +
                                           " is available (" + available->detail +
                                           "); choose a smaller segment size");
  }
  ScopedFd fd(memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    return Status(ErrorCode::kIoError,
                  "memfd_create(" + name + ") failed: " + std::strerror(errno));
  }
  if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    int err = errno;
    return Status(ErrorCode::kNoSpace, "ftruncate of segment " + name + " to " +
                                           std::to_string(size) +
                                           " bytes failed: " + std::strerror(err));
  }
  // Reserve every page now: a sparse memfd would raise SIGBUS on the first write
  // the machine cannot back, long after startup. On a host short of memory,
  // fallocate does not fail but runs into the OOM killer: hence the check above.
  // MAP_POPULATE then maps the pages, so no transfer pays a first-touch fault.
  int rc;
  do {
    rc = fallocate(fd.get(), 0, 0, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    return Status(ErrorCode::kNoSpace, "cannot reserve " + std::to_string(size) +
                                           " bytes for segment " + name + ": " +
                                           std::strerror(err));
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (p == MAP_FAILED) {
    int err = errno;
    return Status(ErrorCode::kNoSpace, "mmap of segment " + name + " (" + std::to_string(size) +
                                           " bytes) failed: " + std::strerror(err));
  }
  // Seal the memfd against every writable mapping made from now on: the fd that
  // same-host clients receive (shm_server.h) then maps read-only, and only this
  // process, through the mapping made above, writes the segment. That is what
  // lets the node fence shared-memory writes (it performs them itself,
  // checking the capability as it copies). The size is sealed too: a client
  // cannot shrink the file under the node's mapping (SIGBUS).
  if (fcntl(fd.get(), F_ADD_SEALS,
            F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int err = errno;
    munmap(p, size);
    return Status(ErrorCode::kIoError, "sealing segment " + name +
                                           " against writable mappings failed (Linux 5.1 or "
                                           "later is needed): " +
                                           std::strerror(err));
  }
  return std::unique_ptr<SegmentMemory>(
      new SegmentMemory(std::move(fd), static_cast<std::byte*>(p), size));
}

void SegmentMemory::SetMount(uint32_t id, std::string binding) {
  auto next = std::make_shared<const Identity>(Identity{id, std::move(binding)});
  std::lock_guard lock(identity_mu_);
  identity_ = std::move(next);
}

void SegmentMemory::SetBinding(std::string binding) { SetMount(id(), std::move(binding)); }

void SegmentMemory::SetId(uint32_t id) { SetMount(id, binding()); }

std::shared_ptr<const SegmentMemory::Identity> SegmentMemory::identity() const {
  std::lock_guard lock(identity_mu_);
  return identity_;
}

std::string SegmentMemory::binding() const { return identity()->binding; }

StatusOr<std::unique_ptr<SegmentMemory>> SegmentMemory::OpenPersistent(const std::string& path,
                                                                       uint64_t file_size) {
  StatusOr<std::unique_ptr<PmemFile>> file = PmemFile::Open(path, file_size);
  if (!file.ok()) return file.status();
  return std::unique_ptr<SegmentMemory>(new SegmentMemory(std::move(file).value()));
}

SegmentMemory::~SegmentMemory() {
  if (pmem_) return;  // the file unmaps itself
  munmap(data_, size_);
}  // then fd_ closes

StatusOr<std::byte*> SegmentMemory::Resolve(const Capability& cap, AccessOp op,
                                            const CapabilitySigner& signer,
                                            int64_t now_unix_ms, Fence* fence) const {
  std::shared_ptr<const Identity> mount = identity();
  uint32_t current = mount->id;
  if (current == 0) {
    return Status(ErrorCode::kSegmentNotFound, "segment is not mounted (no id yet)");
  }
  if (clock_gate_ != nullptr) {
    if (Status s = clock_gate_->Check(now_unix_ms); !s.ok()) return s;
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
  if (Status s = signer.Verify(mount->binding, cap, op, now_unix_ms); !s.ok()) return s;
  if (fence != nullptr) {
    fence->segment_ = this;
    fence->mount_ = std::move(mount);
    fence->expiry_unix_ms_ = cap.expiry_unix_ms;
  }
  return data_ + cap.offset;
}

}  // namespace crescent::transfer
