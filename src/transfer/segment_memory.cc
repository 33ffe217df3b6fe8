#include "transfer/segment_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace crescent::transfer {

namespace {

// "100.0 GiB"
std::string Gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
  return buf;
}

// "107374182400 bytes (100.0 GiB)"
std::string DescribeBytes(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + Gib(bytes) + ")";
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A decimal number at the start of `s` (after blanks); nullopt if there is none
// or it does not fit in 64 bits.
// The leading decimal number of `s` after blanks; nullopt if none or too big.
std::optional<uint64_t> ParseNumber(std::string_view s) {
  const size_t start = s.find_first_not_of(" \t");
  if (start == std::string_view::npos) return std::nullopt;
  uint64_t v = 0;
  const char* first = s.data() + start;
  auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || end == first) return std::nullopt;
  return v;
}

// The lines of `text` (split at '\n'), as views into it.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return out;
}

// The "Name:   123 kB" line of /proc/meminfo, in bytes.
std::optional<uint64_t> MeminfoField(std::string_view text, std::string_view name) {
  for (std::string_view line : Lines(text)) {
    if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
        line[name.size()] != ':') {
      continue;
    }
    std::optional<uint64_t> kib = ParseNumber(line.substr(name.size() + 1));
    if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<AvailableMemory> ParseMeminfoAvailable(std::string_view meminfo) {
  const char* mem_name = "MemAvailable";
  std::optional<uint64_t> mem = MeminfoField(meminfo, mem_name);
  if (!mem) {
    mem_name = "MemFree";  // kernels before 3.14 have no MemAvailable
    mem = MeminfoField(meminfo, mem_name);
  }
  if (!mem) return std::nullopt;
  // shmem pages can go to swap, so free swap counts too.
  uint64_t swap = MeminfoField(meminfo, "SwapFree").value_or(0);
  AvailableMemory out;
  out.bytes = *mem + std::min(swap, UINT64_MAX - *mem);
  out.detail = std::string(mem_name) + " " + Gib(*mem) + " + SwapFree " + Gib(swap);
  return out;
}

std::optional<CgroupLimit> CgroupMemoryMax(const std::string& cgroup_root,
                                           std::string_view proc_self_cgroup) {
  if (!ReadSmallFile(cgroup_root + "/cgroup.controllers")) return std::nullopt;
  std::string dir;
  for (std::string_view line : Lines(proc_self_cgroup)) {
    if (line.substr(0, 3) == "0::") dir = std::string(line.substr(3));
  }
  if (dir.empty() || dir[0] != '/') return std::nullopt;
  std::optional<CgroupLimit> best;
  while (true) {
    // The root cgroup has no memory.max; "max" means no limit.
    std::optional<std::string> max =
        ReadSmallFile(cgroup_root + (dir == "/" ? std::string() : dir) + "/memory.max");
    std::optional<uint64_t> limit = max ? ParseNumber(*max) : std::nullopt;
    if (limit && (!best || *limit < best->bytes)) best = CgroupLimit{*limit, dir};
    if (dir == "/") break;
    size_t slash = dir.rfind('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
  return best;
}

std::optional<AvailableMemory> AvailableSegmentMemory() {
  std::optional<std::string> meminfo = ReadSmallFile("/proc/meminfo");
  if (!meminfo) return std::nullopt;
  std::optional<AvailableMemory> available = ParseMeminfoAvailable(*meminfo);
  if (!available) return std::nullopt;
  std::optional<std::string> self = ReadSmallFile("/proc/self/cgroup");
  std::optional<CgroupLimit> cgroup =
      self ? CgroupMemoryMax("/sys/fs/cgroup", *self) : std::nullopt;
  if (cgroup && cgroup->bytes < available->bytes) {
    available->bytes = cgroup->bytes;
    available->detail = "memory.max of cgroup " + cgroup->path + "; host: " + available->detail;
  }
  return available;
}

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
