#include "cache/prefix_lru_policy.h"

namespace crescent::cache {

void PrefixLruPolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& info) {
  const ObjectId parent = info.parent;
  // Look the parent up first: an untracked parent id is ignored, and the new
  // page cannot be its own parent because it is not tracked yet.
  const auto parent_slot = parent == kNoParent ? List::kNil : list_.Find(parent);
  const auto slot = list_.Add(id, size);
  if (slot == List::kNil) return;
  if (parent_slot != List::kNil) LinkTo(slot, parent_slot);
  list_.PushNewest(slot);
}

void PrefixLruPolicy::LinkTo(List::Slot slot, List::Slot parent_slot) {
  auto& parent_node = list_.at(parent_slot);
  ++parent_node.extra.children;
  auto& links = list_.at(slot).extra;
  links.parent = parent_slot;
  links.parent_generation = parent_node.extra.generation;
}

PrefixLruPolicy::List::Slot PrefixLruPolicy::LiveParent(List::Slot slot) const {
  const PrefixLinks& links = list_.at(slot).extra;
  if (links.parent == List::kNil) return List::kNil;
  return list_.at(links.parent).extra.generation == links.parent_generation ? links.parent
                                                                            : List::kNil;
}

ObjectId PrefixLruPolicy::ParentOf(ObjectId id) const {
  const auto slot = list_.Find(id);
  if (slot == List::kNil) return kNoParent;
  const auto parent = LiveParent(slot);
  return parent == List::kNil ? kNoParent : list_.at(parent).Id();
}

void PrefixLruPolicy::Link(ObjectId child, ObjectId parent) {
  const auto slot = list_.Find(child);
  const auto parent_slot = list_.Find(parent);
  if (slot == List::kNil || parent_slot == List::kNil || slot == parent_slot ||
      LiveParent(slot) != List::kNil) {
    return;
  }
  LinkTo(slot, parent_slot);
}

void PrefixLruPolicy::Access(ObjectId id) {
  ended_.Clear(id);
  const auto slot = list_.Find(id);
  if (slot != List::kNil && list_.IsLinked(slot)) list_.MoveToNewest(slot);
}

void PrefixLruPolicy::Remove(ObjectId id) {
  ended_.Clear(id);
  if (auto slot = list_.Find(id); slot != List::kNil) Forget(slot);
}

std::optional<ObjectId> PrefixLruPolicy::Evict(const SpareFn& spare) {
  // A marked page goes first once it is a leaf (a parked one waits).
  const auto is_leaf = [this](ObjectId id) { return list_.at(list_.Find(id)).extra.children == 0; };
  if (auto victim = ended_.Evict(*this, spare, is_leaf)) return victim;
  const size_t candidates = list_.Count();
  size_t spared = 0;
  for (auto slot = list_.Oldest(); slot != List::kNil; slot = list_.Oldest()) {
    if (list_.at(slot).extra.children > 0) {
      list_.Unlink(slot);  // park it until its last child goes
      continue;
    }
    if (spare && spare(list_.at(slot).Id())) {
      list_.MoveToNewest(slot);
      if (++spared >= candidates) break;
      continue;
    }
    return Forget(slot);
  }
  return std::nullopt;
}

ObjectId PrefixLruPolicy::Forget(List::Slot slot) {
  const PrefixLinks links = list_.at(slot).extra;
  if (links.parent != List::kNil) {
    auto& parent = list_.at(links.parent);
    // A stale link means the parent was removed (and its slot maybe reused).
    if (parent.extra.generation == links.parent_generation && --parent.extra.children == 0) {
      if (!list_.IsLinked(links.parent)) list_.PushOldest(links.parent);  // unpark: a leaf again
      ended_.Ready(parent.Id());
    }
  }
  // A free slot has no children, so a copy of the node array tells parked
  // pages from free slots (ListPolicy::VisitNodes).
  list_.at(slot).extra.children = 0;
  return list_.Erase(slot);
}

}  // namespace crescent::cache
