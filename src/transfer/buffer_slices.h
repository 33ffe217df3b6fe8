// An op's client memory in slices (transport.h, TransferOp::slices): the
// ranges of it the transports hand to the kernel (iovecs) and hash.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "transfer/transport.h"

namespace crescent::transfer {

// The op's memory as slices: its `slices`, or its one buffer of cap.length
// bytes as `*one`.
std::span<const BufferSlice> MemoryOf(const TransferOp& op, BufferSlice* one);

// Up to `max` iovecs for the bytes [offset, offset + want) of `slices`; the
// count filled.
size_t IovecsOf(std::span<const BufferSlice> slices, uint64_t offset, uint64_t want, iovec* out,
                size_t max);

// fn(pointer, bytes) over the bytes [offset, offset + n) of `slices`, in order.
template <typename Fn>
void ForEachRange(std::span<const BufferSlice> slices, uint64_t offset, uint64_t n, Fn&& fn) {
  for (const BufferSlice& s : slices) {
    if (n == 0) return;
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const uint64_t take = std::min<uint64_t>(s.length - offset, n);
    fn(s.data + offset, static_cast<size_t>(take));
    n -= take;
    offset = 0;
  }
}

}  // namespace crescent::transfer
