// SlotIndex: the id -> slot hash index of a SlotTable, which grows without a
// pause.
//
// An open-addressing table of 8-byte entries {hash, slot}, linear probing from
// a home position taken from the top bits of the id's 32-bit hash. Slot 0
// (kNil) marks an empty entry, so fresh zero-filled memory (calloc, or an
// anonymous mapping the kernel fills on first touch) is an empty table with
// nothing written. The stored hash lets a probe skip other ids without
// reading their nodes (an id is compared only when all 32 bits match) and
// lets entries move without reading any node at all.
//
// Invariants:
//  - At most 60% of a table's entries are full; probes therefore end at an
//    empty entry after a few steps.
//  - Erasing shifts the rest of the entry's run back (no tombstones), so every
//    entry is reachable from its home through full entries only.
//  - Growth is incremental (as Redis's dict rehashes): the add that reaches
//    60% makes a table twice the size, which then takes new ids, and each
//    later Add and Erase moves the next kMoveStep positions of the old table
//    into it, always finishing the run it is in. Between calls the moved part
//    of the old table is a span of empty entries that ends at an empty entry,
//    so the runs left in the old table are whole and lookups there stay
//    correct. An id is in exactly one of the two tables. The old table has
//    room for 60% of its size in entries; the new one reaches 60% only after
//    that many more adds, by which time the old one has long been emptied.
//  - A table is a ZeroedBlock, so one of 1 MiB or more is its own anonymous
//    mapping: its pages are zero-filled by the kernel as entries land in
//    them, the moved part of an old table is handed back a few pages at a
//    time, and freeing it is then cheap. So no single call touches more than a few pages it did not
//    touch before (the slowest insert growing a policy to 12M: docs/durability.md).
// Costs in the steady state: one branch on each miss (is a migration under
// way?) and one on each Add and Erase.
// Not thread-safe: the owner's lock (the master's policy lock) guards it.
#pragma once

#include <absl/hash/hash.h>

#include <cassert>
#include <cstdint>
#include <utility>

#include "cache/eviction_policy.h"
#include "cache/zeroed_block.h"

namespace crescent::cache {

class SlotIndex {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNil = 0;

  SlotIndex() : cur_(Table::Make(kMinCapacity)) {}
  ~SlotIndex() = default;
  SlotIndex(const SlotIndex&) = delete;
  SlotIndex& operator=(const SlotIndex&) = delete;

  // The 32 bits kept with each slot; a table of 2^k entries homes an id at
  // its top k bits. absl's hash, not MixBits: the adaptive and learned
  // policies sample ids by the value of MixBits, so the ids a mini simulation
  // holds would all share their top bits and pile up in one run.
  static uint32_t HashOf(ObjectId id) {
    return static_cast<uint32_t>(absl::Hash<ObjectId>{}(id) >> 32);
  }

  size_t size() const { return size_; }
  // Entries of the table that takes new ids.
  size_t capacity() const { return cur_.mask + 1; }
  bool migrating() const { return old_.entries != nullptr; }

  // The slot of `id`, or kNil. id_of(slot) is the id of the node in `slot`.
  template <typename IdOf>
  Slot Find(ObjectId id, const IdOf& id_of) const {
    return FindHashed(HashOf(id), [&](Slot slot) { return id_of(slot) == id; });
  }
  // Adds `id` with the slot make() returns, or returns kNil (and does not
  // call make) if `id` is present.
  template <typename IdOf, typename Make>
  Slot Add(ObjectId id, const IdOf& id_of, Make&& make) {
    return AddHashed(
        HashOf(id), [&](Slot slot) { return id_of(slot) == id; }, std::forward<Make>(make));
  }
  // Removes `slot`, which holds `id`.
  void Erase(ObjectId id, Slot slot) { EraseHashed(HashOf(id), slot); }
  void Prefetch(ObjectId id) const { PrefetchHashed(HashOf(id)); }

  // The same for keys of any kind (the master's byte-string keys): `hash` is
  // a well-mixed 32-bit hash of the key, and matches(slot) tells whether the
  // node in `slot` holds the key.
  template <typename Matches>
  Slot FindHashed(uint32_t hash, const Matches& matches) const {
    const Slot slot = cur_.Find(hash, matches);
    if (slot != kNil || !migrating()) [[likely]] {
      return slot;
    }
    return old_.Find(hash, matches);
  }
  template <typename Matches, typename Make>
  Slot AddHashed(uint32_t hash, const Matches& matches, Make&& make) {
    if (5 * (size_ + 1) > 3 * capacity()) [[unlikely]] {
      Grow(2 * capacity());
    }
    if (migrating()) [[unlikely]] {
      if (old_.Find(hash, matches) != kNil) return kNil;
      MoveSome();  // after the look: it may move the key into cur_
    }
    Entry* entry = cur_.FindOrEmpty(hash, matches);
    if (entry->slot != kNil) return kNil;
    *entry = Entry{hash, make()};
    ++size_;
    return entry->slot;
  }
  // Removes `slot`, whose key hashes to `hash`.
  void EraseHashed(uint32_t hash, Slot slot) {
    if (migrating()) [[unlikely]] {
      if (!cur_.Erase(hash, slot)) {
        [[maybe_unused]] const bool erased = old_.Erase(hash, slot);
        assert(erased);
      }
      --size_;
      MoveSome();
      return;
    }
    [[maybe_unused]] const bool erased = cur_.Erase(hash, slot);
    assert(erased);
    --size_;
  }
  void PrefetchHashed(uint32_t hash) const {
    __builtin_prefetch(&cur_.entries[cur_.Home(hash)]);
    if (migrating()) __builtin_prefetch(&old_.entries[old_.Home(hash)]);
  }

  // Bytes of both tables (the pages of an old one already handed back
  // included).
  size_t MemoryBytes() const { return cur_.block.bytes() + old_.block.bytes(); }

  // Room for `count` ids with no growth until then: at once, not
  // incrementally (a restore calls it before it adds anything).
  void Reserve(size_t count) {
    size_t capacity = kMinCapacity;
    while (5 * count > 3 * capacity) capacity *= 2;
    if (capacity <= this->capacity()) return;
    Grow(capacity);
    FinishMigration();
  }

  // Calls fn(slot) for every slot, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Table* table : {&cur_, &old_}) {
      if (table->entries == nullptr) continue;
      for (size_t i = 0; i <= table->mask; ++i) {
        if (table->entries[i].slot != kNil) fn(table->entries[i].slot);
      }
    }
  }

 private:
  struct Entry {
    uint32_t hash = 0;
    Slot slot = kNil;  // kNil: empty
  };
  static constexpr size_t kMinCapacity = 16;
  // Old-table positions moved per Add or Erase during a migration (plus the
  // rest of the run the last one is in). Each costs a sequential read and one
  // write into the new table; a run is a few entries at 60% load.
  static constexpr size_t kMoveStep = 16;
  static constexpr size_t kPage = ZeroedBlock::kPage;

  struct Table {
    ZeroedBlock block;  // moved, never copied
    Entry* entries = nullptr;
    size_t mask = 0;
    int shift = 32;  // home = hash >> shift: the top log2(capacity) bits

    static Table Make(size_t capacity) {
      assert((capacity & (capacity - 1)) == 0 && capacity <= (size_t{1} << 32));
      Table table;
      table.block = ZeroedBlock(capacity * sizeof(Entry));
      table.entries = static_cast<Entry*>(table.block.data());
      table.mask = capacity - 1;
      table.shift = 32 - __builtin_ctzll(capacity);
      return table;
    }
    bool Mapped() const { return block.mapped(); }
    void Free() {
      block = ZeroedBlock();
      entries = nullptr;
    }

    size_t Home(uint32_t hash) const {
      // A shift by 32 (a one-entry table) is undefined; tables have 16 or more.
      return static_cast<size_t>(hash) >> shift;
    }

    template <typename Matches>
    Slot Find(uint32_t hash, const Matches& matches) const {
      for (size_t i = Home(hash);; i = (i + 1) & mask) {
        const Entry entry = entries[i];
        if (entry.slot == kNil) return kNil;
        if (entry.hash == hash && matches(entry.slot)) return entry.slot;
      }
    }
    // The entry of the key, or the empty entry that ends its probe.
    template <typename Matches>
    Entry* FindOrEmpty(uint32_t hash, const Matches& matches) {
      for (size_t i = Home(hash);; i = (i + 1) & mask) {
        Entry& entry = entries[i];
        if (entry.slot == kNil || (entry.hash == hash && matches(entry.slot))) return &entry;
      }
    }
    void Place(Entry moved) {
      size_t i = Home(moved.hash);
      while (entries[i].slot != kNil) i = (i + 1) & mask;
      entries[i] = moved;
    }
    // Removes `slot` (hashed to `hash`) if present: later entries of its run
    // that may live earlier move back into the gap.
    bool Erase(uint32_t hash, Slot slot) {
      size_t i = Home(hash);
      for (;; i = (i + 1) & mask) {
        if (entries[i].slot == slot) break;
        if (entries[i].slot == kNil) return false;
      }
      for (size_t j = (i + 1) & mask; entries[j].slot != kNil; j = (j + 1) & mask) {
        // Entry j moves into the gap at i unless its home lies after i.
        if (((j - Home(entries[j].hash)) & mask) >= ((j - i) & mask)) {
          entries[i] = entries[j];
          i = j;
        }
      }
      entries[i] = Entry{};
      return true;
    }
  };

  // Makes a table of `capacity` the one that takes new ids and starts moving
  // the old one's entries into it.
  void Grow(size_t capacity) {
    FinishMigration();
    old_ = std::move(cur_);
    cur_ = Table::Make(capacity);
    // Start at an empty entry, so that no run is split across the start.
    size_t start = 0;
    while (old_.entries[start].slot != kNil) ++start;
    move_at_ = start;
    move_end_ = start + old_.mask + 1;
    released_ = (start * sizeof(Entry) + kPage - 1) / kPage * kPage;
  }

  void MoveSome() {
    const size_t stop = move_at_ + kMoveStep;
    const size_t mask = old_.mask;
    while (move_at_ < move_end_) {
      Entry& entry = old_.entries[move_at_ & mask];
      if (entry.slot == kNil) {
        if (move_at_ >= stop) break;  // between runs
      } else {
        cur_.Place(entry);
        entry = Entry{};
      }
      ++move_at_;
    }
    if (move_at_ == move_end_) {
      old_.Free();
      return;
    }
    // Hand back the moved pages (before the wrap at the table's end; the few
    // entries after it go with the table), 64 KiB at a time.
    if (old_.Mapped() && move_at_ <= mask) {
      const size_t done = move_at_ * sizeof(Entry) / kPage * kPage;
      if (done >= released_ + 16 * kPage) {
        old_.block.Release(released_, done);
        released_ = done;
      }
    }
  }

  void FinishMigration() {
    while (migrating()) MoveSome();
  }

  Table cur_;
  Table old_;        // entries == nullptr unless a migration is under way
  size_t size_ = 0;  // ids in both tables
  // The migration moves old-table positions [move_at_, move_end_), counted
  // past the table's end (position p is entry p & mask).
  size_t move_at_ = 0;
  size_t move_end_ = 0;
  size_t released_ = 0;  // bytes of the old table handed back so far
};

}  // namespace crescent::cache
