// TouchQueue: a bounded lock-free multi-producer queue of object ids that reads
// have touched and whose touch the policy has not seen yet.
//
// Readers push an id only on the 0→1 transition of the object's touch flag, so an
// object sits in the queue at most once between flushes and the queue stays small.
// The flusher (holding the master's policy mutex, so there is one consumer at a
// time) pops ids in push order and replays them as policy accesses.
//
// Algorithm: a ring of cells, each with a sequence number (the classic bounded
// MPMC design). A producer claims position p with a CAS on tail_ when the cell's
// sequence equals p, writes the value, then publishes it by storing sequence p+1
// (release). The consumer reads a cell when its sequence is p+1 (acquire), then
// frees it for the producer one lap later by storing p+capacity (release). When
// the ring is full, Push() fails instead of waiting: the caller folds the touch
// into the lease at once and clears its flag, so the lease still holds, the
// next read queues again, and only the policy misses this one access.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

namespace crescent::master {

class TouchQueue {
 public:
  explicit TouchQueue(size_t capacity) : mask_(std::bit_ceil(capacity < 2 ? 2 : capacity) - 1) {
    cells_ = std::make_unique<Cell[]>(mask_ + 1);
    for (size_t i = 0; i <= mask_; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  bool Push(uint64_t value) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.seq.load(std::memory_order_acquire);
      intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Single consumer at a time (callers serialise with the policy mutex).
  bool Pop(uint64_t* value) {
    size_t pos = head_.load(std::memory_order_relaxed);
    Cell& cell = cells_[pos & mask_];
    size_t seq = cell.seq.load(std::memory_order_acquire);
    if (static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1) < 0) return false;  // empty
    *value = cell.value;
    cell.seq.store(pos + mask_ + 1, std::memory_order_release);
    head_.store(pos + 1, std::memory_order_relaxed);
    return true;
  }

  size_t capacity() const { return mask_ + 1; }

 private:
  struct Cell {
    std::atomic<size_t> seq;
    uint64_t value;
  };
  const size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<size_t> tail_{0};  // producers' claim position
  alignas(64) std::atomic<size_t> head_{0};  // consumer position (one consumer)
};

}  // namespace crescent::master
