// ValueHasher: the end-to-end checksum of a stored value, XXH3-64 over its
// bytes, fed in order in chunks of any size. The writer hashes the value once
// before writing its replicas; a reader hashes the bytes as they land in its
// buffer (transfer/transport.h, TransferOp::checksum_out; a same-host read in
// the copy's own pass, transfer/copy_hash.h, which computes HashValue's result
// without this class). All give HashValue's result over the whole value.
//
// Not thread-safe; copyable (the state holds no pointer into itself).
#pragma once

#include <cstddef>
#include <cstdint>

namespace crescent {

class ValueHasher {
 public:
  ValueHasher() { Reset(); }
  void Reset();
  void Update(const void* data, size_t size);
  uint64_t Digest() const;

 private:
  // An XXH3_state_t (value_hash.cc checks size and alignment), kept opaque so
  // that this header does not depend on xxhash's static-linking-only API.
  alignas(64) unsigned char state_[576];
};

// One-shot: the same value as a ValueHasher fed these bytes.
uint64_t HashValue(const void* data, size_t size);

}  // namespace crescent
