#include "transfer/buffer_slices.h"

namespace crescent::transfer {

bool SlicesCover(std::span<const BufferSlice> slices, uint64_t length) {
  uint64_t sum = 0;
  for (const BufferSlice& s : slices) {
    if (s.data == nullptr || s.length == 0) return false;
    sum += s.length;
  }
  return sum == length;
}

std::span<const BufferSlice> MemoryOf(const TransferOp& op, BufferSlice* one) {
  if (!op.slices.empty()) return op.slices;
  *one = BufferSlice{op.buffer, static_cast<size_t>(op.cap.length)};
  return {one, 1};
}

size_t IovecsOf(std::span<const BufferSlice> slices, uint64_t offset, uint64_t want, iovec* out,
                size_t max) {
  size_t filled = 0;
  ForEachRange(slices, offset, want, [&](std::byte* p, size_t n) {
    if (filled < max) out[filled++] = iovec{p, n};
  });
  return filled;
}

}  // namespace crescent::transfer
