// BufferRegistry: the caller's registered memory regions. Zero-copy calls accept
// only ranges that lie entirely inside one registered region, which catches a
// wrong pointer or size before any byte moves. Regions may not overlap.
//
// Registration asks the kernel how the region is mapped (memory_map.h): it must
// be readable, and writable unless registered read-only. A read-only region is
// a put's source only; a get never writes into it, whatever the transport.
//
// With warming on, registration also starts a PageWarmer (transfer/page_warmer.h)
// that has the kernel read one byte of each page of the region, in the
// background: on VMs that shadow page tables, the first kernel access to each
// page (a TCP put's send from it, a get's recv into it) otherwise traps, and a
// fresh buffer's first transfer runs several times slower. Regions that map a
// file are not warmed (that would read the file from its device).
// Unregistering stops the region's warmer before it returns, so the caller may
// unmap the memory then.
// Guarded by a shared mutex: lookups (every zero-copy call) share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>

#include "crescent/client.h"
#include "crescent/status.h"
#include "transfer/page_warmer.h"

namespace crescent::client {

class BufferRegistry {
 public:
  // Destruction stops the warmers still running (~PageWarmer).
  explicit BufferRegistry(bool warm = false) : warm_(warm) {}

  Status Register(const void* ptr, size_t size, BufferAccess access);
  Status Unregister(const void* ptr);
  // Ok when [ptr, ptr + size) lies inside one registered region that allows
  // `need`: kReadOnly to read the range (a put's source), kReadWrite to write
  // it (a get's destination; INVALID_ARGUMENT in a read-only region).
  Status Check(const void* ptr, size_t size, BufferAccess need) const;
  // Blocks until the warmers of the regions registered now have finished (or
  // were stopped); returns at once without warming.
  void WaitWarm() const;
  // Bytes of the registered regions whose pages were warmed so far.
  uint64_t warmed_bytes() const;

 private:
  struct Region {
    size_t size;
    BufferAccess access;
    std::shared_ptr<transfer::PageWarmer> warmer;  // null: not warmed
  };
  const bool warm_;
  mutable std::shared_mutex mu_;
  std::map<uintptr_t, Region> regions_;  // by start address
};

}  // namespace crescent::client
