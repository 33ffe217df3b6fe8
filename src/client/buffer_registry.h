// BufferRegistry: the caller's registered memory regions. Zero-copy calls accept
// only ranges that lie entirely inside one registered region, which catches a
// wrong pointer or size before any byte moves. Regions may not overlap.
//
// Registration asks the kernel how the region is mapped (memory_map.h): it must
// be readable, and writable unless registered read-only. A read-only region is
// a put's source only; a get never writes into it, whatever the transport.
// Guarded by a shared mutex: lookups (every zero-copy call) share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

#include "crescent/client.h"
#include "crescent/status.h"

namespace crescent::client {

class BufferRegistry {
 public:
  Status Register(const void* ptr, size_t size, BufferAccess access);
  Status Unregister(const void* ptr);
  // Ok when [ptr, ptr + size) lies inside one registered region that allows
  // `need`: kReadOnly to read the range (a put's source), kReadWrite to write
  // it (a get's destination; INVALID_ARGUMENT in a read-only region).
  Status Check(const void* ptr, size_t size, BufferAccess need) const;

 private:
  struct Region {
    size_t size;
    BufferAccess access;
  };
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Region> regions_;  // by start address
};

}  // namespace crescent::client
