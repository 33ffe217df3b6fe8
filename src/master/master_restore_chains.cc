// Chain parents of a restore: each restored object linked to its parent key's
// object at the end (docs/durability.md).
//
// A snapshot lists objects in eviction order, and a parent is often newer
// than its child (a shorter request read it last), so its record comes later:
// resolved at the child's record it would not exist yet. So every restored
// put that names a parent key is kept (its object id and that key, by shard,
// in record order) and linked once every record is applied: to the object
// its parent key has then, if the policy that tracks the child tracks it too
// (EvictionPolicy::Link). This is the same whichever way the records were cut
// into batches, since nothing depends on where a batch ends.
//
// A live engine links a page only to a parent already present when the page
// is put, so its links point from newer to older objects and cannot form a
// cycle. Links made at the end have no such order: a key may have named, in
// another put, a parent whose own parent is that key. A link that would close
// a cycle is not made (a cycle of parents would keep each other in the cache
// for ever under leaf-first eviction); a union-find over the links made so
// far finds it.
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::LinkRestoredChains(Policies& policies) {
  if (restore_.chains.empty()) return;
  // Parent keys to ids, each shard's list on one of the cores, one shard lock
  // at a time.
  std::vector<std::vector<std::pair<ObjectId, ObjectId>>> links(objects_.shard_count());
  objects_.ForEachShardInParallel([&](ObjectShard& shard) {
    RestoreState::Chains& chains = restore_.chains[shard.index()];
    std::vector<std::pair<ObjectId, ObjectId>>& out = links[shard.index()];
    out.reserve(chains.child.size());
    uint64_t begin = 0;
    for (size_t i = 0; i < chains.child.size(); ++i) {
      const std::string_view key(chains.keys.data() + begin, chains.key_end[i] - begin);
      begin = chains.key_end[i];
      const Located p = objects_.Locate(key);
      std::shared_lock lock(p.shard->mutex());
      const uint32_t slot = p.shard->Find(key, p.hash);
      if (slot != kNoSlot) out.emplace_back(chains.child[i], p.shard->IdOf(slot));
    }
    chains = {};
  });
  restore_.chains.clear();
  // Union-find over the links made: up[shard][slot] is an ancestor of that
  // object (kNoParent: it is a root). Each child is linked at most once and
  // has no parent before, so it is a root: the link closes a cycle exactly
  // when the parent's root is the child.
  std::vector<std::vector<ObjectId>> up(objects_.shard_count());
  for (const auto& shard : objects_.shards()) {
    std::shared_lock lock(shard->mutex());
    up[shard->index()].assign(shard->slots(), cache::kNoParent);
  }
  auto up_of = [&](ObjectId id) -> ObjectId& { return up[IdShard(id)][IdSlot(id)]; };
  auto root = [&](ObjectId id) {
    ObjectId r = id;
    while (up_of(r) != cache::kNoParent) r = up_of(r);
    while (id != r) id = std::exchange(up_of(id), r);  // path compression
    return r;
  };
  auto tracking = [&](ObjectId id) -> cache::EvictionPolicy* {
    for (cache::EvictionPolicy* p :
         {policies.main.get(), policies.soft.get(), policies.pmem.get()}) {
      if (p->Contains(id)) return p;
    }
    return nullptr;
  };
  for (const auto& part : links) {
    for (const auto& [child, parent] : part) {
      cache::EvictionPolicy* policy = tracking(child);
      if (policy == nullptr || !policy->Contains(parent) || root(parent) == child) continue;
      policy->Link(child, parent);
      up_of(child) = parent;
    }
  }
}

}  // namespace crescent::master
