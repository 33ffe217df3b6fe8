// EntrySlab: a shard's ObjectEntry array, in chunks that never move.
//
// Invariants: entry i lives at chunks_[i / kChunkEntries][i % kChunkEntries]
// for the slab's life (the hash set and the key index name entries by slot and
// read their keys in place). A chunk is one anonymous mapping of 2 MiB
// (MAP_NORESERVE: a page is backed when first written), so growing costs one
// mmap per 32768 entries, not a malloc per few entries as a std::deque's
// 512-byte nodes did (a restore creates millions of entries in seconds).
// From the second chunk on the mapping asks for huge pages (MADV_HUGEPAGE):
// one fault then maps 2 MiB where it mapped 4 KiB; the first is left to small
// pages so that a shard with a handful of entries stays a few pages.
//
// Thread-safety: none of its own; the shard's lock guards it (EmplaceBack
// under the exclusive lock, reads under at least the shared one).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "master/object_entry.h"

namespace crescent::master {

class EntrySlab {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kChunkEntries = kChunkBytes / sizeof(ObjectEntry);

  EntrySlab() = default;
  EntrySlab(const EntrySlab&) = delete;
  EntrySlab& operator=(const EntrySlab&) = delete;
  ~EntrySlab() {
    for (size_t i = 0; i < size_; ++i) (*this)[i].~ObjectEntry();
    for (ObjectEntry* c : chunks_) munmap(c, kChunkBytes);
  }

  ObjectEntry& operator[](size_t i) { return chunks_[i / kChunkEntries][i % kChunkEntries]; }
  const ObjectEntry& operator[](size_t i) const {
    return chunks_[i / kChunkEntries][i % kChunkEntries];
  }
  size_t size() const { return size_; }

  // Appends a default entry.
  void EmplaceBack() {
    if (size_ == chunks_.size() * kChunkEntries) AddChunk();
    new (&(*this)[size_]) ObjectEntry();
    ++size_;
  }

 private:
  void AddChunk() {
    // Twice the size, trimmed to a 2 MiB-aligned chunk: a huge page only
    // backs an aligned 2 MiB.
    void* p = mmap(nullptr, 2 * kChunkBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    char* raw = static_cast<char*>(p);
    const uintptr_t at = reinterpret_cast<uintptr_t>(raw);
    char* chunk = raw + ((kChunkBytes - at % kChunkBytes) % kChunkBytes);
    if (chunk > raw) munmap(raw, static_cast<size_t>(chunk - raw));
    if (chunk + kChunkBytes < raw + 2 * kChunkBytes) {
      munmap(chunk + kChunkBytes, static_cast<size_t>(raw + 2 * kChunkBytes - chunk - kChunkBytes));
    }
    if (!chunks_.empty()) (void)madvise(chunk, kChunkBytes, MADV_HUGEPAGE);
    chunks_.push_back(reinterpret_cast<ObjectEntry*>(chunk));
  }

  std::vector<ObjectEntry*> chunks_;
  size_t size_ = 0;
};

}  // namespace crescent::master
