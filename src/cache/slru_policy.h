// SlruPolicy: segmented LRU (Karedla, Love and Wherry, IEEE Computer 1994).
//
// Two LRU lists over one SlotTable. New objects enter the probation list; a hit
// on a probation object moves it to the protected list, which may hold at most
// slru_protected_ratio of the capacity. When the protected list outgrows that,
// its least recent objects go back to the head of probation. A hit on a
// protected object moves it to the protected head. The victim is probation's
// least recent object, or protected's when probation is empty.
//
// Invariants: every tracked object is on exactly one list, named by its
// `protected_` flag; `protected_used_` is the sum of the protected objects'
// sizes. A spared candidate counts as a hit (so a spared probation object is
// promoted) and is not asked about again in that call before every other
// candidate was. The protected share is re-applied by SetCapacity().
#pragma once

#include <absl/container/flat_hash_map.h>

#include "cache/ended_set.h"
#include "cache/eviction_policy.h"
#include "cache/slot_table.h"

namespace crescent::cache {

class SlruPolicy final : public EvictionPolicy {
 public:
  explicit SlruPolicy(const PolicyOptions& options = {});

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) override;
  void Access(ObjectId id) override;
  void Remove(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;

  // Session hints: marked pages go first (EndedSet).
  void EndSession(ObjectId id) override {
    if (Contains(id)) ended_.Mark(id);
  }
  bool Contains(ObjectId id) const override { return table_.Contains(id); }
  void PrefetchInsert(ObjectId id) const override { table_.PrefetchIndex(id); }
  size_t Count() const override { return table_.size(); }
  uint64_t UsedSize() const override { return probation_.used + protected_.used; }
  void SetCapacity(uint64_t capacity) override;
  std::string_view Name() const override { return "slru"; }
  // Probation, least recent first, then protected, least recent first.
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const override;

  // For tests.
  uint64_t ProtectedSize() const { return protected_.used; }

 private:
  EndedSet ended_;
  using Slot = uint32_t;
  static constexpr Slot kNil = 0;
  struct Node {
    ObjectId id = 0;
    uint64_t size = 0;
    Slot newer = kNil;
    Slot older = kNil;
    bool in_protected = false;

    ObjectId Id() const { return id; }
    void SetId(ObjectId value) { id = value; }
  };
  // A non-circular doubly-linked list, newest at `head`.
  struct List {
    Slot head = kNil;
    Slot tail = kNil;
    uint64_t used = 0;
  };

  List& ListOf(const Node& node) { return node.in_protected ? protected_ : probation_; }
  void PushHead(List& list, Slot slot);
  void Unlink(List& list, Slot slot);
  void Promote(Slot slot);  // to the protected head, demoting its overflow
  ObjectId Erase(Slot slot);

  double protected_ratio_;
  uint64_t protected_target_ = 0;
  SlotTable<Node> table_;
  List probation_, protected_;
};

}  // namespace crescent::cache
