// ObjectShard: one lock domain of the master's object index.
//
// A shard owns a slab of ObjectEntry (entry_slab.h: stable addresses; freed
// slots are reused through a free list and their generation bumped), a hash
// index of slot numbers keyed by the entries' own key bytes, and a crit-bit
// index (key_index.h) of the *complete* objects' slots for prefix listing and
// removal. Both read the key bytes from the entries, so each key is stored
// once. The hash index is a cache::SlotIndex: it grows by moving a few entries
// per add, never rehashing the whole shard under its lock, and keeps 32 bits
// of each key's hash, so moving an entry reads no key.
//
// Locking: mutex() guards everything here. Lookups need the shared lock; Create,
// Publish and Free need the exclusive lock. The entry atomics (deferred touch)
// may be used under the shared lock; see object_entry.h.
#pragma once

#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <span>
#include <string_view>
#include <vector>

#include "cache/slot_index.h"
#include "master/entry_slab.h"
#include "master/key_index.h"
#include "master/object_entry.h"
#include "master/object_id.h"

namespace crescent::master {

inline constexpr uint32_t kNoSlot = ~uint32_t{0};

class ObjectShard {
 public:
  explicit ObjectShard(uint32_t index);
  ObjectShard(const ObjectShard&) = delete;
  ObjectShard& operator=(const ObjectShard&) = delete;

  std::shared_mutex& mutex() const { return mu_; }
  uint32_t index() const { return index_; }

  // Slot of `key` (pending or complete), or kNoSlot.
  uint32_t Find(std::string_view key, uint64_t hash) const;
  // Loads the hash set's memory that Find(key, hash) will read (a restore
  // applying millions of keys: each Find is a cache miss otherwise). Reads the
  // set's own fields: under the lock, or where no other thread uses the shard.
  void PrefetchFind(std::string_view /*key*/, uint64_t hash) const {
    by_key_.PrefetchHashed(static_cast<uint32_t>(hash));
  }
  ObjectEntry& entry(uint32_t slot) { return slab_[slot]; }
  const ObjectEntry& entry(uint32_t slot) const { return slab_[slot]; }
  ObjectId IdOf(uint32_t slot) const { return MakeObjectId(index_, slot, slab_[slot].generation); }
  // The entry named by `id`, or nullptr when the id is stale.
  ObjectEntry* Resolve(ObjectId id);

  // Creates a pending entry for a key that is not present, with its replicas
  // (at least one) and soft-pin deadline (0: none); returns its slot.
  uint32_t Create(std::string_view key, uint64_t hash, std::span<const ReplicaSlot> replicas,
                  TimeMs soft_pin_until);
  // Replaces the entry's replicas (at least one), keeping its key and pins.
  void SetReplicas(uint32_t slot, std::span<const ReplicaSlot> replicas);
  // Marks a pending entry complete and indexes its key for prefix operations.
  void Publish(uint32_t slot);
  // Forgets the entry: unindexes it, releases its key and bumps the generation.
  // The caller has already released the entry's space.
  void Free(uint32_t slot);

  // Restore: from DeferKeyIndex() on, Publish and Free leave the key index
  // alone (prefix visits see nothing), and BuildKeyIndex() then builds it from
  // every complete entry at once, sorted (KeyIndex::Build): a random insert
  // costs a cache miss per tree level, a sorted build one pass.
  void DeferKeyIndex();
  void BuildKeyIndex();
  // Restore: while on, Create carves the entries' blocks out of the
  // KeyBlockArena (a restore creates millions in a few seconds); off closes
  // the chunk being filled.
  void UseBlockArena(bool on);
  bool key_index_deferred() const { return keys_deferred_; }
  // Makes room for `count` more entries, so that a restore's inserts do not
  // rehash the hash set (each rehash hashes every key again).
  void Reserve(size_t count);

  // Complete keys under `prefix`, in key order, until fn returns false; with
  // `after`, only the keys after it (KeyIndex::VisitPrefixAfter).
  void VisitPrefix(std::string_view prefix, const std::function<bool(uint32_t slot)>& fn) const;
  void VisitPrefixAfter(std::string_view prefix, std::string_view after,
                        const std::function<bool(uint32_t slot)>& fn) const;
  // Complete keys that are prefixes of `key` and longer than `min_length`,
  // longest first, until fn returns false (KeyIndex::VisitPrefixesOf).
  void VisitPrefixesOf(std::string_view key, size_t min_length,
                       const std::function<bool(uint32_t slot)>& fn) const;
  // Every live slot (pending and complete), in slot order.
  void VisitAll(const std::function<void(uint32_t slot)>& fn) const;
  // Calls fn(slot) for every complete entry, taking the shared lock itself
  // for kSlotsPerStep slots at a time and releasing it between steps, so that
  // writers wait one step at most; fn runs under it. Every entry complete
  // throughout the walk is seen. Returns the longest step in ms (steady clock).
  // Do not hold the lock when calling it.
  static constexpr uint32_t kSlotsPerStep = 4096;
  double VisitCompleteInSteps(const std::function<void(uint32_t slot)>& fn) const;

  size_t size() const { return by_key_.size(); }
  // Slots in the slab, free ones included: every slot is below it.
  size_t slots() const { return slab_.size(); }
  // Bytes of metadata held by this shard (slab, hash index, KeyIndex, keys).
  size_t MemoryBytes() const;

 private:
  const uint32_t index_;
  mutable std::shared_mutex mu_;
  EntrySlab slab_;
  std::vector<uint32_t> free_slots_;
  // slot + 1 of every live entry (pending or complete), by its key's hash
  // (its low 32 bits; the shard is chosen by the top ones).
  cache::SlotIndex by_key_;
  KeyIndex keys_;               // complete keys → slot, reading the keys from slab_
  bool keys_deferred_ = false;  // between DeferKeyIndex and BuildKeyIndex
  size_t block_bytes_ = 0;      // entries' heap blocks (keys and their rare fields)
  bool arena_blocks_ = false;   // Create takes blocks from arena_ (UseBlockArena)
  KeyBlockArena::Cursor arena_;
};

}  // namespace crescent::master
