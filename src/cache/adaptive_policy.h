// AdaptivePolicy: the adaptive cache scheduler ("adaptive"). It runs
// miniature simulations of several candidate policies beside the live cache
// and moves the live cache towards the one that is winning.
//
//  - Candidates (AdaptiveCandidates()): the learned policy with its default
//    classes and with every page feature, lru, prefix-lru, sieve, fifo, s3fifo
//    at three small-queue sizes and slru at two protected fractions.
//  - Sampling: a reference is simulated when its key's mixed hash is below a
//    threshold (SHARDS spatial sampling: Waldspurger et al., FAST'15), so
//    every reference of a sampled key is seen and none of the others. The
//    simulations start with the policy, at rate 1 (every key). Whenever the
//    live cache holds more than 2 × kMiniObjects sampled objects, the rate
//    drops to kMiniObjects / its object count and the simulations start over
//    at that rate (SHARDS' fixed-size idea, restarting instead of pruning);
//    so a cache of up to 2 × kMiniObjects objects is simulated in full, and a
//    larger one settles at about kMiniObjects sampled objects. Each
//    simulation's capacity is the live capacity times the rate (the capacity
//    the owner evicts against; before any is known, what is cached when the
//    cache first evicts). A sampled page's parent in the simulations is its
//    nearest sampled ancestor (its anchor), found when it is written (or, for
//    pages cached when the rate changes, then) and kept, so a parent evicted
//    later does not cut the chain in the simulations; a parent evicted just
//    before, to make room for the page, is one of the last few victims, whose
//    anchors are kept.
//  - Scoring: every window of W sampled references (W = max(kMinWindow, the
//    sampled objects cached: about one turnover of the cache)) the
//    CandidateSelector updates each
//    candidate's score from its prefix hit ratio in that window and decides
//    whether to move (candidate_selector.h: margin, confirmation, warm-up).
//  - Rehearsing: a move costs hits while the new policy fills (it starts with
//    none of the live cache's recency or frequency), and the winner's
//    simulation, which has run it from the start, does not show that cost. So
//    before the live cache moves, a miniature of the move itself runs: the
//    simulations include a twin of the followed candidate (same policy, seed,
//    capacity and references, so the same state), and when the selector picks
//    a winner the twin moves to it through a PolicyHandover, as the live cache
//    would. After kRehearsalWindows windows the live cache moves only if the
//    moved twin has hit more than the followed candidate's simulation over
//    those windows: the move has paid for itself. Either way the simulations
//    then start over, empty, so the twin again matches the followed one.
//  - Moving: PolicyHandover switches the live cache to a fresh instance of the
//    winner and lets the previous policy drain (both give victims by their
//    share of the cache), without flushing anything.
//
//  - Session hints: EndSession(id) marks the page in the live policy (and the
//    draining one, during a move) and, when its key is sampled, in every
//    simulation, queued in order with the sampled references; so the
//    candidates are scored as they would run with the hints.
//
// The live cache starts as the learned policy. The simulations run inside
// Insert() and Access(), that is, on the master's eviction thread when it
// flushes deferred touches and inside PutEnd, never on a read.
//
// Invariants: `table_` holds exactly the ids the handover tracks (and, until
// the next call, the last victim: `evicted_id_`); each entry
// keeps what a move needs to re-admit the object (size, parent link, history,
// write end). `sampled_ids_` holds exactly those of its ids whose history is
// sampled at the current rate. Timeline() keeps at most kMaxTimeline points: when it fills up,
// every other point is dropped and points are then recorded half as often.
//
// Memory: per live object a 40-byte entry in a SlotTable and its 8-byte index
// slot (at 30-60% load), and the live policy's own (102 bytes for learned); in
// total, the 12 simulations (11 candidates and the twin) of up to 2 ×
// kMiniObjects objects each (~18 MiB), each learned instance's fixed model
// (< 2.5 MiB) and up to kBatch queued sampled references. 183 bytes per object
// in all at 1M objects (policy_bench Memory/adaptive). No call pauses to grow:
// the table grows a few index entries per insert (slot_table.h), and a rate
// change settles anchors lazily (phase_). Not thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/candidate_selector.h"
#include "cache/eviction_policy.h"
#include "cache/mini_simulation.h"
#include "cache/policy_handover.h"
#include "cache/slot_table.h"

namespace crescent::cache {

struct AdaptiveCandidate {
  std::string label;      // how reports and the timeline name it
  std::string policy;     // a registry name
  PolicyOptions options;  // capacity and seed are filled in per instance
};

// The candidates, in the order scores and timelines list them; the first is
// the one the live cache starts with.
const std::vector<AdaptiveCandidate>& AdaptiveCandidates();

class AdaptivePolicy final : public EvictionPolicy {
 public:
  static constexpr uint64_t kMiniObjects = 8192;
  static constexpr uint64_t kMinWindow = 256;
  static constexpr size_t kMaxTimeline = 4096;
  // Sampled references queued before the simulations run them (a window's
  // end runs them at once).
  static constexpr size_t kBatch = 64;
  // How many windows a rehearsed move runs before the live cache follows it
  // (or not): about as many turnovers as the move's draining takes to all
  // but finish (its share falls by about e per turnover).
  static constexpr int kRehearsalWindows = 8;

  // `candidates` (for tests; the registry passes AdaptiveCandidates()): the
  // live cache starts with the first.
  explicit AdaptivePolicy(const PolicyOptions& options = {},
                          std::vector<AdaptiveCandidate> candidates = AdaptiveCandidates());

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) override;
  void Access(ObjectId id) override;
  void Remove(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;
  // Marks `id` in the live policy (and the draining one) and, when its key is
  // sampled, in every simulation, in order with the sampled references.
  void EndSession(ObjectId id) override;

  bool Contains(ObjectId id) const override {
    return !(evicted_id_ && *evicted_id_ == id) && table_.Contains(id);
  }
  size_t Count() const override { return table_.size() - (evicted_id_ ? 1 : 0); }
  uint64_t UsedSize() const override { return handover_.UsedSize(); }
  void SetCapacity(uint64_t capacity) override;
  std::string_view Name() const override { return "adaptive"; }
  ObjectId ParentOf(ObjectId id) const override;
  void Link(ObjectId child, ObjectId parent) override;
  // The live policy's order, outside a move, when that policy keeps one
  // (never while it follows learned or s3fifo).
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const override {
    return handover_.VisitInEvictionOrder(fn);
  }

  // Settles every anchor the last rate change left unsettled, at once (for
  // tests: the result is the same as settling them as they are read).
  void SettleAllAnchors() { Sweep(~size_t{0}); }
  // Whether the sweep after the last rate change is still under way.
  bool SettlingAnchors() const { return sweep_at_ < sweep_end_; }

  // What the scheduler is doing, for `crescent sim` and tests.
  struct TimelinePoint {
    uint64_t refs;              // live references (inserts + accesses) so far
    std::vector<float> ratios;  // each candidate's window hit ratio
    uint32_t followed;          // the candidate the live cache followed
  };
  const std::vector<TimelinePoint>& Timeline() const { return timeline_; }
  const std::vector<AdaptiveCandidate>& Candidates() const { return candidates_; }
  // The candidate the live cache follows.
  size_t Followed() const { return followed_; }
  // How many times the live cache has moved to another candidate.
  size_t Moves() const { return moves_; }
  // How many moves were rehearsed and not made: the rehearsal did not pay.
  size_t RejectedMoves() const { return rejected_; }
  // The candidate a move to which is being rehearsed, if any.
  std::optional<size_t> Rehearsing() const {
    return rehearsal_ ? std::optional<size_t>(rehearsal_->target) : std::nullopt;
  }
  // The fraction of keys simulated.
  double SampleRate() const;
  bool Moving() const { return handover_.Draining(); }
  const EvictionPolicy& Live() const { return handover_.live(); }

 private:
  using Slot = SlotIndex::Slot;
  static constexpr Slot kNil = SlotIndex::kNil;
  // Node slots the anchor sweep settles per Insert (see Settle()).
  static constexpr size_t kSweepStep = 64;

  // What a move and the simulations need of a live object: one node of
  // table_, 40 bytes.
  struct Entry {
    ObjectId id;
    uint64_t history;  // the key identity the caller passed (or the id)
    uint64_t anchor;   // its nearest sampled ancestor's history, or kNoParent
    ObjectId parent;   // its parent's id when written (it may have left since)
    uint64_t size : 61;
    uint64_t ends_write : 1;
    uint64_t live : 1;  // in the table (a free node's fields are stale)
    // Equal to phase_ once `anchor` is as of the current sampling rate.
    uint64_t anchor_phase : 1;

    ObjectId Id() const { return id; }
    void SetId(ObjectId value) { id = value; }
  };
  // What an entry that was live at the last rate change gives its children
  // there, kept when it leaves or is relinked before the sweep reaches them.
  struct KeptBelow {
    bool live;       // false: the id was not live at the rate change
    uint64_t below;  // AnchorBelow() at the rate change
  };

  // Erases the last victim's entry (see evicted_id_).
  void ErasePendingVictim();
  // Takes `slot` out of the table (its id out of sampled_ids_ too).
  void EraseEntry(Slot slot);
  std::unique_ptr<EvictionPolicy> MakeCandidate(size_t i, uint64_t capacity) const;
  // The parent's slot, or kNil when it is no longer cached.
  Slot LiveParent(const Entry& entry) const;
  InsertInfo InfoOf(const Entry& entry) const;
  bool Sampled(uint64_t history) const;
  // What a child of `slot` takes as its anchor (settling it first).
  uint64_t AnchorBelow(Slot slot);
  uint64_t SettledBelow(const Entry& entry) const {
    return Sampled(entry.history) ? entry.history : entry.anchor;
  }
  bool Unsettled(const Entry& entry) const { return entry.anchor_phase != phase_; }
  // Gives `slot` (and its unsettled ancestors) the anchor the live chain of
  // the last rate change gives it.
  void Settle(Slot slot);
  // Before `slot` leaves or is relinked during a sweep: keeps what it gives
  // its unsettled children.
  void KeepBelow(Slot slot);
  // Settles the next `count` node slots of the sweep; all of them with ~0.
  void Sweep(size_t count);
  // The anchor of a page whose parent `parent` is no longer cached: the
  // parent's, if it was one of the last few victims, else kNoParent.
  uint64_t AnchorBelowVictim(ObjectId parent) const;
  // Counts a reference, and queues it for the simulations if it is sampled.
  void Simulate(Slot slot);
  // Runs the queued sampled references through every simulation.
  void RunPendingReferences();
  // (Re)starts the simulations, empty, at `rate` (at most the current one).
  void StartSimulations(double rate);
  // Starts the simulations (and the twin of the followed candidate) over,
  // empty, at the current rate.
  void RestartSimulations();
  // A fresh instance of candidate `i` for a cache of `capacity`, starting from
  // what its simulation has learned (a learned policy's statistics).
  std::unique_ptr<EvictionPolicy> Successor(size_t i, uint64_t capacity) const;
  void EndRehearsalWindow(const std::vector<MiniSimulation::Window>& windows);
  uint64_t MiniCapacity() const;
  void EndWindow();
  void Record(const std::vector<double>& ratios);

  PolicyOptions options_;
  std::vector<AdaptiveCandidate> candidates_;
  uint64_t capacity_;
  // One entry per live object. It grows without a pause (slot_table.h): an
  // insert moves a few index entries, never the whole table.
  SlotTable<Entry> table_;
  // Anchors follow the sampling rate: when it drops, every entry's anchor is
  // recomputed from the live chain of that moment (the rate change), lazily.
  // phase_ flips, so every entry is unsettled; an unsettled anchor is
  // settled when read, and a sweep settles kSweepStep node slots per Insert
  // from slot 1 up to sweep_end_ (the slots in use at the rate change), so it
  // is done long before the rate can change again (the table must double).
  // Until then kept_ holds, for each id live at the rate change that has
  // left or been relinked since, what it gave its children then, and marks
  // each id inserted since as not live then: so a settled anchor is exactly
  // what a recomputation of the whole table at the rate change would give.
  bool phase_ = false;
  size_t sweep_at_ = 0;
  size_t sweep_end_ = 0;
  absl::flat_hash_map<ObjectId, KeptBelow> kept_;
  // The ids in table_ whose key is sampled: small (about kMiniObjects), so an
  // Access of any other id is settled without touching table_.
  absl::flat_hash_set<ObjectId> sampled_ids_;
  // The last victim, whose entry is still in table_ (and, if sampled, its id
  // in sampled_ids_): Evict() starts loading the entry and the next call
  // erases it, so the erase's cache misses overlap
  // with the owner's removal of the victim instead of stalling Evict(). Every
  // other member function erases it first; Contains() and Count() leave it out.
  std::optional<ObjectId> evicted_id_;
  // The last few victims and what a child of each takes as its anchor: a page
  // written right after its parent was evicted (the parent made room for it)
  // still continues its parent's chain in the simulations.
  struct RecentVictim {
    ObjectId id = kNoParent;
    uint64_t anchor_below = kNoParent;
  };
  static constexpr size_t kRecentVictims = 8;
  std::array<RecentVictim, kRecentVictims> recent_victims_{};
  size_t next_victim_slot_ = 0;
  PolicyHandover handover_;
  CandidateSelector selector_;
  // One simulation per candidate, then the twin of the followed candidate
  // (minis_.back()), which a rehearsal moves.
  std::vector<MiniSimulation> minis_;
  // Sampled references not yet run (at most kBatch, all in the current
  // window): they run before anything reads or changes the simulations.
  struct SampledReference {
    uint64_t key;  // the history key
    uint64_t anchor;
    uint64_t size;
    bool ends_write;
    bool ends_session = false;  // a session hint on `key`, not a reference
  };
  std::vector<SampledReference> pending_;
  size_t followed_ = 0;  // the candidate the live cache follows
  struct Rehearsal {
    size_t target;
    int windows = 0;
    uint64_t moved_hits = 0;  // the twin's, moving to `target`
    uint64_t stay_hits = 0;   // the followed candidate's simulation's
  };
  std::optional<Rehearsal> rehearsal_;
  size_t rejected_ = 0;
  double rate_ = 1;
  uint64_t threshold_ = ~0ull;  // sampled: Mix(history) <= threshold_
  bool evicted_ = false;        // the live cache has evicted (so it was full)
  uint64_t window_ = kMinWindow;
  uint64_t window_refs_ = 0;
  uint64_t refs_ = 0;
  std::vector<TimelinePoint> timeline_;
  uint64_t record_every_ = 1;  // windows per timeline point
  uint64_t windows_ = 0;
  size_t moves_ = 0;
};

}  // namespace crescent::cache
