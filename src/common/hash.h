// Key hashing shared by every layer: one 64-bit XXH3 over the key's bytes taken
// as unsigned. The Bloom filter, the master's shard choice and the policies all
// derive from this one value, so a key is hashed once per request.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace crescent {

inline uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

inline uint64_t HashBytes(std::span<const unsigned char> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace crescent
