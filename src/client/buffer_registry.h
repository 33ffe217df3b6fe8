// BufferRegistry: the caller's registered memory regions. Zero-copy calls accept
// only ranges that lie entirely inside one registered region, which catches a
// wrong pointer or size before any byte moves. Regions may not overlap.
// Guarded by a shared mutex: lookups (every zero-copy call) share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

#include "crescent/status.h"

namespace crescent::client {

class BufferRegistry {
 public:
  Status Register(const void* ptr, size_t size);
  Status Unregister(const void* ptr);
  // Ok when [ptr, ptr + size) lies inside one registered region.
  Status Check(const void* ptr, size_t size) const;

 private:
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, size_t> regions_;  // start -> size
};

}  // namespace crescent::client
