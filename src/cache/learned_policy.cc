#include "cache/learned_policy.h"

#include <algorithm>
#include <cassert>

#include "cache/hash_mix.h"

namespace crescent::cache {
namespace {

constexpr uint64_t kMinEpoch = 64;

}  // namespace

LearnedPolicy::LearnedPolicy(const PolicyOptions& options)
    : features_(options.learned_features != 0 ? options.learned_features & kAllPageFeatures
                                              : kDefaultPageFeatures),
      rng_(MixBits(options.seed) | 1),
      model_(features_) {}

void LearnedPolicy::AdoptLearning(const LearnedPolicy& other, bool recent_keys) {
  model_.AdoptStatistics(other.model_);
  pool_ranked_at_ = kUnranked;
  if (recent_keys) recent_ = other.recent_;
}

uint64_t LearnedPolicy::NextRandom() {
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

void LearnedPolicy::AddLeaf(Slot slot) {
  Node& node = table_.at(slot);
  node.leaf_pos = static_cast<uint32_t>(leaves_.size());
  leaves_.push_back({.slot = slot,
                     .stamp = node.stamp,
                     .size = static_cast<float>(node.size),
                     .cls = node.cls,
                     .in_pool = false});
  ended_.Ready(node.Id());
}

void LearnedPolicy::DropLeaf(Slot slot) {
  Node& node = table_.at(slot);
  if (node.leaf_pos == kNotLeaf) return;
  const uint32_t pos = node.leaf_pos;
  const uint32_t last = static_cast<uint32_t>(leaves_.size() - 1);
  // Out of the pool (keeping the pool's order), and the moved leaf's pool
  // entry follows it.
  if (leaves_[pos].in_pool) {
    std::erase_if(pool_, [&](const Candidate& c) { return c.leaf == pos; });
  }
  if (pos != last && leaves_[last].in_pool) {
    for (Candidate& c : pool_) {
      if (c.leaf == last) c.leaf = pos;
    }
  }
  leaves_[pos] = leaves_[last];
  table_.at(leaves_[pos].slot).leaf_pos = pos;
  leaves_.pop_back();
  node.leaf_pos = kNotLeaf;
}

void LearnedPolicy::SyncLeaf(const Node& node) {
  if (node.leaf_pos == kNotLeaf) return;
  Leaf& leaf = leaves_[node.leaf_pos];
  leaf.stamp = node.stamp;
  leaf.cls = node.cls;
}

void LearnedPolicy::AddToPool(uint32_t leaf) {
  if (leaves_[leaf].in_pool) return;
  Candidate c{.leaf = leaf, .age = 0, .rank = 0.0};
  if (pool_ranked_at_ != now_) {
    leaves_[leaf].in_pool = true;
    pool_.push_back(c);  // RankPool() places it
    return;
  }
  Score(c);
  // One that would rank past kPool + 1 cannot outlast this call (its best
  // entry leaves as the victim, the rest beyond kPool are dropped): skip it.
  if (pool_.size() > static_cast<size_t>(kPool) && !Better(c, pool_.back())) return;
  leaves_[leaf].in_pool = true;
  // After every entry it does not beat: among equals the first come goes first.
  auto at = std::partition_point(pool_.begin(), pool_.end(),
                                 [&](const Candidate& e) { return !Better(c, e); });
  pool_.insert(at, c);
}

void LearnedPolicy::RankPool() {
  if (pool_ranked_at_ == now_) return;
  // Insertion sort: stable (equals keep their order), allocates nothing, and
  // the pool is small and mostly still in order from the last ranking.
  for (size_t i = 0; i < pool_.size(); ++i) {
    Candidate c = pool_[i];
    Score(c);
    size_t j = i;
    for (; j > 0 && Better(c, pool_[j - 1]); --j) pool_[j] = pool_[j - 1];
    pool_[j] = c;
  }
  pool_ranked_at_ = now_;
}

void LearnedPolicy::Reference(Slot slot) {
  Node& node = table_.at(slot);
  node.stamp = static_cast<uint32_t>(now_);
  Reclassify(node);
  model_.Observe(node.history, node.cls, now_);
  ++now_;
  if (now_ >= next_epoch_) {
    const uint64_t objects = std::max<uint64_t>(1, table_.size());
    recent_.Resize(ReuseModel::kHorizonObjects * objects);
    model_.Learn(objects, now_);
    next_epoch_ = now_ + std::max(kMinEpoch, objects);
  }
}

void LearnedPolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& info) {
  const uint64_t history = MixBits(info.history == kSameAsId ? id : info.history);
  // Look the parent up first: the new page cannot be its own parent.
  const Slot parent = info.parent == kNoParent ? Table::kNil : table_.Find(info.parent);
  const Slot slot = table_.Add(id);
  assert(slot != Table::kNil && "Insert() of an id that is already tracked");
  if (slot == Table::kNil) return;
  Node& node = table_.at(slot);
  node.history = history;
  node.size = size;
  used_ += size;
  node.facts.seen_before = recent_.Contains(history);
  recent_.Add(history);
  node.facts.ends_write = info.ends_write;
  if (parent != Table::kNil) LinkTo(slot, parent);
  AddLeaf(slot);
  Reference(slot);
}

void LearnedPolicy::LinkTo(Slot slot, Slot parent) {
  Node& node = table_.at(slot);
  Node& p = table_.at(parent);
  node.parent = parent;
  node.parent_generation = p.generation;
  node.facts.depth = static_cast<uint8_t>(std::min(255, p.facts.depth + 1));
  if (p.children++ == 0) DropLeaf(parent);
  p.facts.extensions = static_cast<uint8_t>(std::min(255, p.facts.extensions + 1));
  Reclassify(p);
}

LearnedPolicy::Slot LearnedPolicy::LiveParent(Slot slot) const {
  const Node& node = table_.at(slot);
  if (node.parent == Table::kNil) return Table::kNil;
  return table_.at(node.parent).generation == node.parent_generation ? node.parent : Table::kNil;
}

ObjectId LearnedPolicy::ParentOf(ObjectId id) const {
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return kNoParent;
  const Slot parent = LiveParent(slot);
  return parent == Table::kNil ? kNoParent : table_.at(parent).Id();
}

void LearnedPolicy::Link(ObjectId child, ObjectId parent) {
  const Slot slot = table_.Find(child);
  const Slot parent_slot = table_.Find(parent);
  if (slot == Table::kNil || parent_slot == Table::kNil || slot == parent_slot ||
      LiveParent(slot) != Table::kNil) {
    return;
  }
  LinkTo(slot, parent_slot);
  Reclassify(table_.at(slot));  // its depth changed
}

void LearnedPolicy::Access(ObjectId id) {
  ended_.Clear(id);
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return;
  Node& node = table_.at(slot);
  node.facts.reads = static_cast<uint8_t>(std::min(255, node.facts.reads + 1));
  Reference(slot);
}

void LearnedPolicy::Remove(ObjectId id) {
  ended_.Clear(id);
  if (const Slot slot = table_.Find(id); slot != Table::kNil) Forget(slot);
}

ObjectId LearnedPolicy::Forget(Slot slot) {
  DropLeaf(slot);
  const Node& node = table_.at(slot);
  // Remembered from its last use: written, or leaving now.
  recent_.Add(node.history);
  if (node.parent != Table::kNil) {
    Node& p = table_.at(node.parent);
    // A stale link means the parent was removed (and its slot maybe reused).
    if (p.generation == node.parent_generation && --p.children == 0) AddLeaf(node.parent);
  }
  const ObjectId id = node.Id();
  used_ -= node.size;
  table_.Erase(slot);
  return id;
}

double LearnedPolicy::Rank(const Leaf& leaf) const {
  return model_.Density(leaf.cls, AgeOf(leaf.stamp)) /
         std::max(1.0, static_cast<double>(leaf.size));
}

std::optional<ObjectId> LearnedPolicy::Evict(const SpareFn& spare) {
  // A marked page goes first once it is a leaf (one with cached children
  // waits for them, as every page does here).
  const auto is_leaf = [this](ObjectId id) {
    return table_.at(table_.Find(id)).leaf_pos != kNotLeaf;
  };
  if (auto victim = ended_.Evict(*this, spare, is_leaf)) return victim;
  std::optional<ObjectId> victim;
  while (!leaves_.empty()) {
    // A rank stays valid until the next reference (ages, classes and
    // densities change only then), so the pool stays ordered within a round
    // and each new candidate is ranked once, where it goes in.
    RankPool();
    for (int i = 0; i < kSamples; ++i) {
      // Lemire's multiply-shift: a uniform index below the size, no division.
      AddToPool(static_cast<uint32_t>(((NextRandom() >> 32) * leaves_.size()) >> 32));
    }
    // Least density first, among equals the oldest.
    size_t best = 0;
    for (size_t i = 1; i < pool_.size() && pool_[i].rank == pool_[0].rank; ++i) {
      if (pool_[i].age > pool_[best].age) best = i;
    }
    const uint32_t leaf = pool_[best].leaf;
    const Slot slot = leaves_[leaf].slot;
    leaves_[leaf].in_pool = false;
    pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(best));
    Node& node = table_.at(slot);
    // What forgetting it will touch, loading while the owner decides on it.
    if (node.parent != Table::kNil) table_.Prefetch(node.parent);
    recent_.Prefetch(node.history);
    if (spare && spare(node.Id())) {
      // Counts as used now; out of the sample space until the call ends.
      node.stamp = static_cast<uint32_t>(now_);
      DropLeaf(slot);
      spared_.push_back(slot);
      continue;
    }
    // Its parent, if this was its last child, is a leaf now, and as old as
    // this page was at least: a candidate for the next call.
    const Handle parent{node.parent, node.parent_generation};
    victim = Forget(slot);
    if (parent.slot != Table::kNil) {
      const Node& p = table_.at(parent.slot);
      if (p.generation == parent.generation && p.leaf_pos != kNotLeaf) AddToPool(p.leaf_pos);
    }
    break;
  }
  for (Slot slot : spared_) AddLeaf(slot);
  spared_.clear();
  // Keep the best of the rest for the next call (ranked as of this call).
  if (pool_.size() > static_cast<size_t>(kPool)) {
    for (size_t i = kPool; i < pool_.size(); ++i) leaves_[pool_[i].leaf].in_pool = false;
    pool_.resize(kPool);
  }
  // The next call most likely evicts the best candidate ranked now: start
  // loading its node while the owner removes this victim.
  if (!pool_.empty() && pool_ranked_at_ == now_) table_.Prefetch(leaves_[pool_.front().leaf].slot);
  return victim;
}

}  // namespace crescent::cache
