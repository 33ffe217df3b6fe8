#include "transfer/pmem_file.h"

#include <fcntl.h>
#include <libpmem2.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/clock.h"

namespace crescent::transfer {
namespace {

constexpr char kMagic[16] = {'C', 'R', 'E', 'S', 'C', 'E', 'N', 'T',
                             '-', 'P', 'M', 'E', 'M', '\0', '\0', '\0'};
// magic 16, version 4, reserved 4, data size 8, uuid 16, created 8, xxh3 8
constexpr size_t kFieldBytes = 16 + 4 + 4 + 8 + 16 + 8;

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// PmemFile::file_identity of the file `st` describes. The boot id tells two
// hosts (or two boots) apart, where device and inode numbers may repeat.
uint64_t FileIdentity(const struct stat& st) {
  struct {
    uint64_t dev;
    uint64_t ino;
    char boot_id[40];
  } id{};
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  if (const ScopedFd fd(open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC));
      fd.valid()) {
    (void)!read(fd.get(), id.boot_id, sizeof id.boot_id);
  }
  const uint64_t h = XXH3_64bits(&id, sizeof id);
  return h != 0 ? h : 1;
}

std::string Pmem2Error(const std::string& what) {
  const char* msg = pmem2_errormsg();
  return what + ": " + (msg != nullptr && *msg != '\0' ? msg : "libpmem2 failed");
}

std::string Hex(const std::array<uint8_t, 16>& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t v : b) {
    out += kDigits[v >> 4];
    out += kDigits[v & 15];
  }
  return out;
}

bool ReadAt(int fd, std::byte* out, size_t n, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, out + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

bool WriteAt(int fd, const std::byte* in, size_t n, uint64_t at) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pwrite(fd, in + done, n - done, static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

// Whether the header block `header` and the first `data_bytes` of the file
// are all zero bytes.
StatusOr<bool> AllZero(int fd, const std::byte* header, uint64_t data_bytes) {
  auto zero = [](const std::byte* p, size_t n) {
    return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
  };
  if (!zero(header, PmemFile::kHeaderBytes)) return false;
  auto block = std::make_unique<std::byte[]>(PmemFile::kHeaderBytes);
  for (uint64_t at = 0; at < data_bytes; at += PmemFile::kHeaderBytes) {
    if (!ReadAt(fd, block.get(), PmemFile::kHeaderBytes, at)) {
      return Status(ErrorCode::kIoError, Errno("cannot read", errno));
    }
    if (!zero(block.get(), PmemFile::kHeaderBytes)) return false;
  }
  return true;
}

}  // namespace

void EncodePmemHeader(const PmemHeader& h, std::byte* out) {
  std::memset(out, 0, PmemFile::kHeaderBytes);
  std::byte* p = out;
  auto put = [&p](const void* v, size_t n) {
    std::memcpy(p, v, n);
    p += n;
  };
  const uint32_t version = PmemHeader::kVersion;
  const uint32_t reserved = 0;
  put(kMagic, sizeof kMagic);
  put(&version, 4);
  put(&reserved, 4);
  put(&h.data_size, 8);
  put(h.uuid.data(), 16);
  put(&h.created_unix_ms, 8);
  const uint64_t sum = XXH3_64bits(out, kFieldBytes);
  put(&sum, 8);
}

StatusOr<PmemHeader> DecodePmemHeader(const std::byte* in) {
  if (std::memcmp(in, kMagic, sizeof kMagic) != 0) {
    return Status(ErrorCode::kCorruptData, "no Crescent segment header (a foreign file)");
  }
  uint32_t version = 0;
  std::memcpy(&version, in + 16, 4);
  if (version != PmemHeader::kVersion) {
    return Status(ErrorCode::kCorruptData, "segment header version " + std::to_string(version) +
                                               ", this build reads version " +
                                               std::to_string(PmemHeader::kVersion));
  }
  uint64_t sum = 0;
  std::memcpy(&sum, in + kFieldBytes, 8);
  if (sum != XXH3_64bits(in, kFieldBytes)) {
    return Status(ErrorCode::kCorruptData, "segment header checksum does not match (damaged)");
  }
  PmemHeader h;
  std::memcpy(&h.data_size, in + 24, 8);
  std::memcpy(h.uuid.data(), in + 32, 16);
  std::memcpy(&h.created_unix_ms, in + 48, 8);
  return h;
}

StatusOr<std::unique_ptr<PmemFile>> PmemFile::Open(const std::string& path, uint64_t file_size) {
  const std::string named = "persistent segment file " + path;
  if (file_size < kMinFileBytes || file_size % 4096 != 0) {
    return Status(ErrorCode::kInvalidSize,
                  named + ": size " + std::to_string(file_size) +
                      " must be a multiple of 4096 and at least " + std::to_string(kMinFileBytes));
  }
  std::unique_ptr<PmemFile> f(new PmemFile());
  f->path_ = path;
  f->fd_.reset(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!f->fd_.valid()) return Status(ErrorCode::kIoError, Errno("cannot open " + named, errno));
  struct stat st{};
  if (fstat(f->fd_.get(), &st) != 0)
    return Status(ErrorCode::kIoError, Errno("stat " + named, errno));
  if (!S_ISREG(st.st_mode)) {
    return Status(ErrorCode::kInvalidArgument, named + " is not a regular file");
  }
  if (flock(f->fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      return Status(ErrorCode::kUnavailable,
                    named + " is held by another process (another store node uses it)");
    }
    return Status(ErrorCode::kIoError, Errno("cannot lock " + named, err));
  }
  const uint64_t header_at = file_size - kHeaderBytes;
  auto header = std::make_unique<std::byte[]>(kHeaderBytes);
  PmemHeader h;
  // An empty file is new; so is one of the right size that start reserved
  // (posix_fallocate below) but never wrote a header into, having stopped in
  // between (a crash, a kill): its header block is all zero, and so is its
  // data, which nothing writes before the header. The first MiB of data is
  // checked too, so that a foreign file that merely ends in zeros is refused.
  bool fresh = st.st_size == 0;
  if (!fresh) {
    if (static_cast<uint64_t>(st.st_size) != file_size) {
      return Status(ErrorCode::kInvalidSize,
                    named + " is " + std::to_string(st.st_size) + " bytes, not the " +
                        std::to_string(file_size) +
                        " asked for (give its size, or a new path for a new segment)");
    }
    if (!ReadAt(f->fd_.get(), header.get(), kHeaderBytes, header_at)) {
      return Status(ErrorCode::kIoError, Errno("cannot read the header of " + named, errno));
    }
    StatusOr<bool> zero = AllZero(f->fd_.get(), header.get(), kMinFileBytes - kHeaderBytes);
    if (!zero.ok()) {
      return Status(ErrorCode::kIoError, named + ": " + zero.status().message());
    }
    fresh = *zero;
  }
  if (fresh) {
    f->created_ = true;
    // Reserve every block now: a sparse file on a full disk would fail later,
    // with SIGBUS on a store into the mapping.
    if (int err = posix_fallocate(f->fd_.get(), 0, static_cast<off_t>(file_size)); err != 0) {
      (void)ftruncate(f->fd_.get(), 0);
      return Status(err == ENOSPC ? ErrorCode::kNoSpace : ErrorCode::kIoError,
                    Errno("cannot reserve " + std::to_string(file_size) + " bytes for " + named,
                          err));
    }
    h.data_size = header_at;
    if (getrandom(h.uuid.data(), h.uuid.size(), 0) != static_cast<ssize_t>(h.uuid.size())) {
      return Status(ErrorCode::kIoError, Errno("getrandom for the segment UUID", errno));
    }
    h.created_unix_ms = UnixNowMs();
    EncodePmemHeader(h, header.get());
    if (!WriteAt(f->fd_.get(), header.get(), kHeaderBytes, header_at) ||
        fdatasync(f->fd_.get()) != 0) {
      const int err = errno;
      (void)ftruncate(f->fd_.get(), 0);
      return Status(err == ENOSPC ? ErrorCode::kNoSpace : ErrorCode::kIoError,
                    Errno("cannot write the header of " + named, err));
    }
  } else {
    StatusOr<PmemHeader> decoded = DecodePmemHeader(header.get());
    if (!decoded.ok()) {
      return Status(decoded.status().code(),
                    named + ": " + decoded.status().message() +
                        "; refusing to use it (remove it, or give a new path for a new segment)");
    }
    h = *decoded;
    if (h.data_size != header_at) {
      return Status(ErrorCode::kCorruptData, named + ": the header says " +
                                                 std::to_string(h.data_size) +
                                                 " data bytes, the file holds " +
                                                 std::to_string(header_at));
    }
  }
  f->uuid_ = Hex(h.uuid);
  f->file_identity_ = FileIdentity(st);
  f->read_fd_.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!f->read_fd_.valid())
    return Status(ErrorCode::kIoError, Errno("cannot reopen " + named, errno));

  pmem2_config* cfg = nullptr;
  pmem2_source* src = nullptr;
  if (pmem2_config_new(&cfg) != 0) return Status(ErrorCode::kIoError, Pmem2Error(named));
  int rc = pmem2_source_from_fd(&src, f->fd_.get());
  // Page granularity is the weakest: libpmem2 then accepts any file, and
  // persists through msync where the file is not on DAX.
  if (rc == 0) rc = pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
  if (rc == 0) rc = pmem2_config_set_length(cfg, header_at);
  if (rc == 0) rc = pmem2_map_new(&f->map_, cfg, src);
  const std::string failure = rc != 0 ? Pmem2Error("cannot map " + named) : std::string();
  if (src != nullptr) pmem2_source_delete(&src);
  pmem2_config_delete(&cfg);
  if (rc != 0) return Status(ErrorCode::kIoError, failure);
  f->data_ = static_cast<std::byte*>(pmem2_map_get_address(f->map_));
  f->data_size_ = header_at;
  f->persist_ = pmem2_get_persist_fn(f->map_);
  return f;
}

void PmemFile::Persist(const std::byte* p, size_t n) const {
  if (n != 0) persist_(p, n);
}

PmemFile::~PmemFile() {
  if (map_ != nullptr) pmem2_map_delete(&map_);
}  // then read_fd_ closes, and fd_, which releases the flock

}  // namespace crescent::transfer
