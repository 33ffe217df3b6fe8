// ZeroedBlock: an owned block of zero-filled memory that is cheap to get, to
// give back part by part, and to free, whatever its size; for the tables that
// must grow or be replaced under the master's policy lock without a pause
// (slot_index.h, recent_keys.h).
//
// Below kMapBytes it is calloc'd (a copy of at most 1 MiB). From kMapBytes on
// it is an anonymous mapping of its own (MAP_NORESERVE): the kernel zero-fills
// each page when it is first touched, so getting one writes nothing and costs
// no memory until it is used; Release() hands back the whole pages of a range
// (they read as zero again and stop counting as resident), so that a block
// being emptied can be given back a few pages per call; and unmapping what is
// left is then cheap. Copying writes every byte (a copy is a rare, whole
// event: a policy adopting another's state).
// Not thread-safe.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace crescent::cache {

class ZeroedBlock {
 public:
  static constexpr size_t kMapBytes = size_t{1} << 20;
  static constexpr size_t kPage = 4096;

  ZeroedBlock() = default;
  explicit ZeroedBlock(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    if (mapped()) {
      data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (data_ == MAP_FAILED) data_ = nullptr;
    } else {
      data_ = std::calloc(bytes, 1);
    }
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~ZeroedBlock() { Free(); }
  ZeroedBlock(const ZeroedBlock& o) : ZeroedBlock(o.bytes_) {
    if (bytes_ > 0) std::memcpy(data_, o.data_, bytes_);
  }
  ZeroedBlock& operator=(const ZeroedBlock& o) {
    if (this != &o) *this = ZeroedBlock(o);
    return *this;
  }
  ZeroedBlock(ZeroedBlock&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  ZeroedBlock& operator=(ZeroedBlock&& o) noexcept {
    if (this != &o) {
      Free();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool empty() const { return data_ == nullptr; }
  bool mapped() const { return bytes_ >= kMapBytes; }

  // Hands back the whole pages inside bytes [from, to): they read as zero
  // again. Nothing for a calloc'd block.
  void Release(size_t from, size_t to) {
    if (!mapped()) return;
    from = (from + kPage - 1) / kPage * kPage;
    to = to / kPage * kPage;
    if (to > from) madvise(static_cast<char*>(data_) + from, to - from, MADV_DONTNEED);
  }

 private:
  void Free() {
    if (data_ == nullptr) return;
    if (mapped()) {
      munmap(data_, bytes_);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }

  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace crescent::cache
