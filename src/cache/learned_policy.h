// LearnedPolicy: chain-aware eviction by learned hit density ("learned").
//
// Every page has a class made of facts the master knows (page_class.h: whether
// its key was reused, its readers, whether it ended its write, its depth, how
// often its chain was extended there), and a ReuseModel learns online, from
// those classes, the hit density of a page at each age. Eviction takes the
// page of least density per unit of size among a sample of the leaves.
//
// Invariants:
//  - Only leaves are evicted, as in prefix-lru: a page whose child pages are
//    cached is worth at least as much as they are (every child needs it to be
//    reachable as a prefix), so it waits until its last child is gone. A child
//    link is a weak (slot, generation) handle, so removing a parent leaves its
//    children's links stale, no scan needed.
//  - `leaves_` holds exactly the tracked pages without children, except the
//    candidates spared during the current Evict() call, which sit in `spared_`
//    until the call ends; `leaf_pos` is a page's index in `leaves_`. A leaf
//    entry repeats what ranking needs (stamp, class, size) so that sampling
//    and ranking read the small leaf array, never the far-apart nodes: a
//    leaf's stamp and class are written to both together.
//  - `pool_` holds indices into `leaves_`, each at most once (`in_pool`); a
//    leaf leaving `leaves_` leaves the pool with it, and one moved inside
//    `leaves_` has its pool entry follow it, so every pool entry is a leaf.
//    When `pool_ranked_at_` is now_, every entry is ranked as of now_ and the
//    pool is ordered best first, so the victim is its first entry and a new
//    candidate is inserted in place: no call scans or re-sorts the pool
//    until a reference changes the ranks.
//  - `now_` counts references (Insert and Access); a page's `stamp` is the
//    time of its last one, its age now_ − stamp.
//
// Evict() draws kSamples leaves at random (xorshift, seeded by
// PolicyOptions::seed, so runs are reproducible), adds them to a pool of the
// best candidates left over from earlier calls, and evicts the pool's page of
// least density; the rest of the pool (at most kPool) waits for the next call.
// A round of evictions thus looks at many more pages than one call draws. A
// candidate's rank is kept while no reference has happened since it was
// computed (a round of evictions references nothing, so each candidate is
// ranked once per round). A spared candidate counts as used now and leaves the
// sample space for the rest of the call, so Evict() gives up (nullopt) only
// once every leaf was offered.
//
// Learning stays off the read path: Access() only updates the page's stamp,
// read count and class and feeds the model one observation (a hash map probe
// for the sampled keys); the densities are recomputed once per epoch (as many
// references as there are pages), inside an Insert or Access.
//
// Memory: a 56-byte node per page plus its 4-byte index slot (at 30-60% load)
// and 16 bytes per leaf in `leaves_`; RecentKeys at 4 bytes per key of its window (4 ×
// the page count, so 16 bytes per page); the ReuseModel's fixed ~2.5 MiB at
// most. 88 bytes per page in all at 1M pages (policy_bench Memory/learned).
#pragma once

#include <cstdint>
#include <vector>

#include "cache/ended_set.h"
#include "cache/eviction_policy.h"
#include "cache/node_array.h"
#include "cache/page_class.h"
#include "cache/recent_keys.h"
#include "cache/reuse_model.h"
#include "cache/slot_table.h"

namespace crescent::cache {

class LearnedPolicy final : public EvictionPolicy {
 public:
  static constexpr int kSamples = 4;
  static constexpr int kPool = 28;

  explicit LearnedPolicy(const PolicyOptions& options = {});

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
  uint64_t UsedSize() const override { return used_; }
  void SetCapacity(uint64_t /*capacity*/) override {}
  std::string_view Name() const override { return "learned"; }
  ObjectId ParentOf(ObjectId id) const override;
  void Link(ObjectId child, ObjectId parent) override;

  // Starts from what `other` has learned: its model's statistics and, with
  // `recent_keys`, the keys it saw recently. The adaptive policy does this
  // when its live cache moves to a learned candidate, from that candidate's
  // miniature simulation (whose recent keys are all the keys only when it
  // samples every key).
  void AdoptLearning(const LearnedPolicy& other, bool recent_keys);

  // For tests and reports.
  const ReuseModel& model() const { return model_; }
  size_t LeafCount() const { return leaves_.size(); }

 private:
  EndedSet ended_;
  using Slot = uint32_t;
  static constexpr uint32_t kNotLeaf = ~uint32_t{0};

  struct Node {
    uint32_t id_low = 0;
    uint32_t id_high = 0;
    uint64_t history = 0;  // the key's mixed hash
    uint64_t size = 0;
    uint32_t stamp = 0;   // now_ (mod 2^32) at its last reference
    uint32_t parent = 0;  // slot of its parent, or kNil
    uint32_t parent_generation = 0;
    uint32_t generation = 0;
    uint32_t leaf_pos = kNotLeaf;
    uint16_t children = 0;
    uint8_t cls = 0;
    PageFacts facts;

    ObjectId Id() const { return (uint64_t{id_high} << 32) | id_low; }
    void SetId(ObjectId id) {
      id_low = static_cast<uint32_t>(id);
      id_high = static_cast<uint32_t>(id >> 32);
    }
  };
  using Table = SlotTable<Node>;
  struct Handle {
    Slot slot;
    uint32_t generation;
  };
  // What ranking a leaf needs, beside it in one small array.
  struct Leaf {
    Slot slot;
    uint32_t stamp;  // its node's stamp
    float size;      // its node's size (only ever divided by)
    uint8_t cls;     // its node's class
    bool in_pool;
  };
  struct Candidate {
    uint32_t leaf;  // index in leaves_
    uint32_t age;   // its age when ranked
    double rank;
  };
  static constexpr uint64_t kUnranked = ~uint64_t{0};
  // a goes before b: less density per unit of size. Equals keep the order
  // they came in (the first come is kept when the pool is cut to kPool);
  // Evict() takes the oldest of the equals at the front.
  static bool Better(const Candidate& a, const Candidate& b) { return a.rank < b.rank; }

  uint64_t AgeOf(uint32_t stamp) const { return static_cast<uint32_t>(now_) - stamp; }
  double Rank(const Leaf& leaf) const;
  void Score(Candidate& c) const {
    c.age = static_cast<uint32_t>(AgeOf(leaves_[c.leaf].stamp));
    c.rank = Rank(leaves_[c.leaf]);
  }
  // Ranks the pool as of now_ and orders it, if it is not already.
  void RankPool();
  void AddLeaf(Slot slot);
  void DropLeaf(Slot slot);
  // Copies the node's stamp and class to its leaf entry, if it is a leaf.
  void SyncLeaf(const Node& node);
  void AddToPool(uint32_t leaf);
  void Reference(Slot slot);  // one reference: stamp, class, model, epoch
  void Reclassify(Node& node) {
    node.cls = PageClass(node.facts, features_);
    SyncLeaf(node);
  }
  ObjectId Forget(Slot slot);  // erases the page, unlinking it from its parent
  // Links `slot` to `parent` (its depth, the parent's children, leaf set and class).
  void LinkTo(Slot slot, Slot parent);
  // The live parent slot of `slot`, or kNil (none, or a stale link).
  Slot LiveParent(Slot slot) const;
  uint64_t NextRandom();

  const uint32_t features_;
  Table table_;
  uint64_t used_ = 0;
  // A NodeArray: past 1 MiB it grows without copying (a vector's doubling
  // copied every leaf under the master's policy lock).
  NodeArray<Leaf> leaves_;
  std::vector<Slot> spared_;  // taken out of leaves_ by the current Evict()
  // Candidates kept between Evict() calls, best (next victim) first when
  // ranked as of pool_ranked_at_ (kUnranked: not ranked since a reference).
  std::vector<Candidate> pool_;
  uint64_t pool_ranked_at_ = kUnranked;
  uint64_t now_ = 0;
  uint64_t next_epoch_ = 0;
  uint64_t rng_;
  RecentKeys recent_;
  ReuseModel model_;
};

}  // namespace crescent::cache
