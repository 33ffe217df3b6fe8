// PmemFile: the file behind a persistent segment (`--pmem PATH:SIZE`), mapped
// with libpmem2. On a DAX file system its stores persist with CPU cache
// flushes; on an ordinary file (tmpfs, ext4) through msync. libpmem2 picks.
//
// Layout: the segment's bytes fill [0, size - kHeaderBytes), and the header
// takes the file's last kHeaderBytes. The data thus starts at offset 0, so a
// same-host client maps the file exactly as it maps a DRAM memfd.
//
// The header names the segment: a magic, a version, the data size, a random
// UUID drawn when the file is created, and an XXH3 of those fields. A node that
// restarts with the same file presents the same UUID, which is how the master
// knows the bytes are the same segment's (docs/persistent-tier.md).
//
// Open refuses, each with a message that names the file: a path it cannot
// create or write, a file another process holds (an exclusive flock, held
// while the PmemFile lives), a file of another size, a non-empty file without
// a Crescent header (foreign) or with a damaged one, and a size the file system
// cannot reserve (posix_fallocate: a full disk fails at start, not with SIGBUS
// on a later write). A file of the right size whose header block and first MiB
// are all zero was reserved by a start that stopped before it wrote the header
// (nothing is written before it): it is taken as new, not refused as foreign.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/fd.h"
#include "crescent/status.h"

struct pmem2_map;

namespace crescent::transfer {

class PmemFile {
 public:
  static constexpr uint64_t kHeaderBytes = 4096;
  // The smallest file: a header and one MiB of data.
  static constexpr uint64_t kMinFileBytes = kHeaderBytes + (uint64_t{1} << 20);

  // Opens (creating it when missing or empty) the file `path` of `file_size`
  // bytes, which must be a multiple of 4096.
  static StatusOr<std::unique_ptr<PmemFile>> Open(const std::string& path, uint64_t file_size);
  ~PmemFile();
  PmemFile(const PmemFile&) = delete;
  PmemFile& operator=(const PmemFile&) = delete;

  std::byte* data() const { return data_; }
  uint64_t data_size() const { return data_size_; }
  const std::string& path() const { return path_; }
  // 32 hex digits, fixed when the file was created.
  const std::string& uuid() const { return uuid_; }
  // Names this file on this host since boot, which a copy of it (same header,
  // same UUID) does not share: an XXH3 of its device, its inode and the boot id.
  // Non-zero. The master refuses a mount of the UUID from another file while
  // the node holding the original is alive (docs/persistent-tier.md).
  uint64_t file_identity() const { return file_identity_; }
  // True when Open created the file (or found it empty, or reserved but never
  // initialised): nothing in it is old.
  bool created() const { return created_; }
  // A read-only descriptor of the file, for same-host clients: a mapping of it
  // cannot be made writable.
  int read_fd() const { return read_fd_.get(); }
  // Makes [p, p + n) of the data durable before it returns.
  void Persist(const std::byte* p, size_t n) const;

 private:
  PmemFile() = default;
  std::string path_;
  std::string uuid_;
  uint64_t file_identity_ = 0;
  bool created_ = false;
  ScopedFd fd_;       // read-write, holds the flock
  ScopedFd read_fd_;  // read-only, handed to clients
  pmem2_map* map_ = nullptr;
  void (*persist_)(const void*, size_t) = nullptr;
  std::byte* data_ = nullptr;
  uint64_t data_size_ = 0;
};

// The header's fields, encoded in kHeaderBytes (the rest zero); exposed for
// tests that damage a file.
struct PmemHeader {
  static constexpr uint32_t kVersion = 1;
  uint64_t data_size = 0;
  std::array<uint8_t, 16> uuid{};
  int64_t created_unix_ms = 0;
};
void EncodePmemHeader(const PmemHeader& h, std::byte* out /* kHeaderBytes */);
// kCorruptData naming what is wrong: not a Crescent header (foreign), another
// version, or a checksum that does not match.
StatusOr<PmemHeader> DecodePmemHeader(const std::byte* in /* kHeaderBytes */);

}  // namespace crescent::transfer
