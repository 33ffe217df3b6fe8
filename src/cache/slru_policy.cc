#include "cache/slru_policy.h"

#include <algorithm>
#include <cassert>

namespace crescent::cache {

SlruPolicy::SlruPolicy(const PolicyOptions& options)
    : protected_ratio_(std::clamp(options.slru_protected_ratio, 0.0, 1.0)) {
  SetCapacity(options.capacity);
}

void SlruPolicy::SetCapacity(uint64_t capacity) {
  protected_target_ = static_cast<uint64_t>(static_cast<double>(capacity) * protected_ratio_);
  while (protected_.used > protected_target_ && protected_.tail != kNil) {
    const Slot demoted = protected_.tail;
    Unlink(protected_, demoted);
    table_.at(demoted).in_protected = false;
    PushHead(probation_, demoted);
  }
}

void SlruPolicy::PushHead(List& list, Slot slot) {
  Node& node = table_.at(slot);
  node.older = list.head;
  node.newer = kNil;
  if (list.head != kNil) table_.at(list.head).newer = slot;
  list.head = slot;
  if (list.tail == kNil) list.tail = slot;
  list.used += node.size;
}

void SlruPolicy::Unlink(List& list, Slot slot) {
  Node& node = table_.at(slot);
  if (node.newer != kNil) {
    table_.at(node.newer).older = node.older;
  } else {
    list.head = node.older;
  }
  if (node.older != kNil) {
    table_.at(node.older).newer = node.newer;
  } else {
    list.tail = node.newer;
  }
  node.newer = node.older = kNil;
  list.used -= node.size;
}

void SlruPolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& /*info*/) {
  const Slot slot = table_.Add(id);
  assert(slot != kNil && "Insert() of an id that is already tracked");
  if (slot == kNil) return;
  table_.at(slot).size = size;
  PushHead(probation_, slot);
}

void SlruPolicy::Promote(Slot slot) {
  Node& node = table_.at(slot);
  Unlink(ListOf(node), slot);
  node.in_protected = true;
  PushHead(protected_, slot);
  // Demote the least recent protected objects past the share, never the one
  // just promoted: an object larger than the share still gets its hit's worth.
  while (protected_.used > protected_target_ && protected_.tail != slot) {
    const Slot demoted = protected_.tail;
    Unlink(protected_, demoted);
    table_.at(demoted).in_protected = false;
    PushHead(probation_, demoted);
  }
}

void SlruPolicy::Access(ObjectId id) {
  ended_.Clear(id);
  if (const Slot slot = table_.Find(id); slot != kNil) Promote(slot);
}

ObjectId SlruPolicy::Erase(Slot slot) {
  const Node& node = table_.at(slot);
  const ObjectId id = node.id;
  Unlink(ListOf(node), slot);
  table_.Erase(slot);
  return id;
}

void SlruPolicy::Remove(ObjectId id) {
  ended_.Clear(id);
  if (const Slot slot = table_.Find(id); slot != kNil) Erase(slot);
}

bool SlruPolicy::VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const {
  for (const List* list : {&probation_, &protected_}) {
    for (Slot slot = list->tail; slot != kNil; slot = table_.at(slot).newer) fn(table_.at(slot).id);
  }
  return true;
}

std::optional<ObjectId> SlruPolicy::Evict(const SpareFn& spare) {
  if (auto victim = ended_.Evict(*this, spare)) return victim;
  const size_t candidates = table_.size();
  size_t spared = 0;
  while (spared < candidates) {
    const Slot slot = probation_.tail != kNil ? probation_.tail : protected_.tail;
    if (slot == kNil) break;
    if (spare && spare(table_.at(slot).id)) {
      // A hit: a probation object is promoted, a protected one goes to the
      // protected head. Either way it is behind every other candidate now,
      // except demoted objects, which were all offered before it.
      Promote(slot);
      ++spared;
      continue;
    }
    return Erase(slot);
  }
  return std::nullopt;
}

}  // namespace crescent::cache
