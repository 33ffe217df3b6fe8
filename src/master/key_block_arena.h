// KeyBlockArena: where a large restore carves its entries' heap blocks (key
// bytes and rare fields, object_entry.h) from, instead of one malloc each.
//
// Why: a restore creates millions of entries in a few seconds. A malloc per
// block, on fresh memory that the kernel faults in 4 KiB at a time, was about a
// third of the CPU a restore spent before it served. Here blocks are bumped out
// of 256 KiB chunks of one address-space reservation that asks for huge pages
// (MADV_HUGEPAGE): one fault maps 2 MiB, and a block costs a pointer bump.
//
// Invariants:
//  - Every block an arena Cursor hands out lies in the reservation, so
//    Owns(p) (a range check) tells an arena block from a new[] one; the
//    entry's deleter (BlockDelete) uses it, so an entry frees either kind.
//  - A chunk's count is its blocks still live, plus one while a cursor is
//    filling it. The one that brings it to zero hands the chunk back: its
//    pages are returned to the kernel (MADV_DONTNEED) and the chunk is reused
//    before any never-used one. A restore fills chunks in record order, which
//    is the eviction order of a snapshot's records, so chunks empty as the
//    restored objects are evicted.
//  - A block that would not fit a quarter chunk, or any block when the
//    reservation was refused (strict overcommit), is not the arena's: the
//    cursor returns nullptr and the caller uses new[].
//
// Thread-safety: Free may run on any thread (the counts are atomic; the free
// list has its own mutex). A Cursor is one thread's at a time (a shard's, under
// its exclusive lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace crescent::master {

class KeyBlockArena {
 public:
  static constexpr size_t kChunkBytes = size_t{256} << 10;
  static constexpr size_t kReserveBytes = size_t{16} << 30;  // address space, not memory
  static constexpr size_t kChunks = kReserveBytes / kChunkBytes;

  // The process's arena, reserved on first use.
  static KeyBlockArena& Instance();

  // Whether `p` is an arena block (of any arena cursor, live or not).
  static bool Owns(const char* p) {
    const char* base = base_.load(std::memory_order_acquire);
    return base != nullptr && p >= base && p < base + kReserveBytes;
  }
  // Releases an arena block (Owns(p)).
  static void Free(char* p) {
    Instance().Release(static_cast<size_t>(p - base_.load()) / kChunkBytes);
  }

  // Hands out blocks from one chunk at a time.
  class Cursor {
   public:
    Cursor() = default;
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    ~Cursor() { Close(); }
    // A block of `bytes` (8-aligned), or nullptr: the caller allocates it.
    char* Allocate(size_t bytes);
    // Lets go of the chunk being filled.
    void Close();

   private:
    static constexpr size_t kNone = ~size_t{0};
    size_t chunk_ = kNone;
    size_t used_ = 0;  // bytes of chunk_ handed out
  };

  // Chunks holding blocks or being filled (figures, tests).
  size_t chunks_in_use() const;

 private:
  KeyBlockArena();
  // A chunk for a cursor, its count 1; kNone-like kChunks when none is left.
  size_t TakeChunk();
  void Release(size_t chunk);

  static std::atomic<char*> base_;                 // the reservation; null until made, or refused
  std::unique_ptr<std::atomic<uint32_t>[]> live_;  // per chunk: blocks + open cursor
  mutable std::mutex mu_;                          // guards the two below
  std::vector<size_t> free_chunks_;                // emptied chunks, reused first
  size_t next_chunk_ = 0;                          // chunks from here on never used
};

// ObjectEntry's block deleter: an arena block goes back to its chunk.
struct BlockDelete {
  void operator()(char* p) const {
    if (KeyBlockArena::Owns(p)) {
      KeyBlockArena::Free(p);
    } else {
      delete[] p;
    }
  }
};

}  // namespace crescent::master
