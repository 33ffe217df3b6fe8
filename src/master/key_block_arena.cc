#include "master/key_block_arena.h"

#include <sys/mman.h>

namespace crescent::master {

std::atomic<char*> KeyBlockArena::base_{nullptr};

KeyBlockArena& KeyBlockArena::Instance() {
  static KeyBlockArena* arena = new KeyBlockArena();  // never destroyed: blocks outlive statics
  return *arena;
}

KeyBlockArena::KeyBlockArena() : live_(new std::atomic<uint32_t>[kChunks]) {
  for (size_t i = 0; i < kChunks; ++i) live_[i].store(0, std::memory_order_relaxed);
  // MAP_NORESERVE: pages are backed when first written.
  void* p = mmap(nullptr, kReserveBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // no arena: every cursor hands out nothing
  (void)madvise(p, kReserveBytes, MADV_HUGEPAGE);
  base_.store(static_cast<char*>(p), std::memory_order_release);
}

size_t KeyBlockArena::TakeChunk() {
  if (base_.load(std::memory_order_acquire) == nullptr) return kChunks;
  std::lock_guard lock(mu_);
  size_t chunk;
  if (!free_chunks_.empty()) {
    chunk = free_chunks_.back();
    free_chunks_.pop_back();
  } else if (next_chunk_ < kChunks) {
    chunk = next_chunk_++;
  } else {
    return kChunks;
  }
  live_[chunk].store(1, std::memory_order_relaxed);  // the cursor's hold
  return chunk;
}

void KeyBlockArena::Release(size_t chunk) {
  // acq_rel: whoever frees the chunk sees every use of its blocks before.
  if (live_[chunk].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  (void)madvise(base_.load(std::memory_order_relaxed) + chunk * kChunkBytes, kChunkBytes,
                MADV_DONTNEED);
  std::lock_guard lock(mu_);
  free_chunks_.push_back(chunk);
}

size_t KeyBlockArena::chunks_in_use() const {
  std::lock_guard lock(mu_);
  return next_chunk_ - free_chunks_.size();
}

char* KeyBlockArena::Cursor::Allocate(size_t bytes) {
  if (bytes == 0 || bytes > kChunkBytes / 4) return nullptr;
  const size_t need = (bytes + 7) & ~size_t{7};
  KeyBlockArena& arena = Instance();
  if (chunk_ == kNone || used_ + need > kChunkBytes) {
    Close();
    const size_t chunk = arena.TakeChunk();
    if (chunk == kChunks) return nullptr;
    chunk_ = chunk;
    used_ = 0;
  }
  char* p = base_.load(std::memory_order_relaxed) + chunk_ * kChunkBytes + used_;
  used_ += need;
  arena.live_[chunk_].fetch_add(1, std::memory_order_relaxed);
  return p;
}

void KeyBlockArena::Cursor::Close() {
  if (chunk_ == kNone) return;
  Instance().Release(chunk_);
  chunk_ = kNone;
}

}  // namespace crescent::master
