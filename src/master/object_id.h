// ObjectId: the 64-bit name the master gives each live object, used by the
// eviction policy and the touch queue. It packs the shard, the slot in the shard's
// slab and the slot's generation, so an id kept after its object is gone (in the
// policy or the touch queue) is recognised as stale instead of naming whatever
// reuses the slot:  [ shard:8 | generation:24 | slot:32 ].
#pragma once

#include <cstdint>

#include "cache/eviction_policy.h"

namespace crescent::master {

using cache::ObjectId;

inline constexpr ObjectId MakeObjectId(uint32_t shard, uint32_t slot, uint32_t generation) {
  return (static_cast<uint64_t>(shard & 0xff) << 56) |
         (static_cast<uint64_t>(generation & 0xffffff) << 32) | slot;
}
inline constexpr uint32_t IdShard(ObjectId id) { return static_cast<uint32_t>(id >> 56); }
inline constexpr uint32_t IdSlot(ObjectId id) { return static_cast<uint32_t>(id); }
inline constexpr uint32_t IdGeneration(ObjectId id) {
  return static_cast<uint32_t>(id >> 32) & 0xffffff;
}

}  // namespace crescent::master
