#include "cache/adaptive_policy.h"

#include <algorithm>
#include <cassert>

#include "cache/hash_mix.h"
#include "cache/learned_policy.h"
#include "cache/page_class.h"

namespace crescent::cache {
namespace {

AdaptiveCandidate Candidate(std::string label, std::string policy, PolicyOptions options = {}) {
  return {std::move(label), std::move(policy), options};
}

}  // namespace

const std::vector<AdaptiveCandidate>& AdaptiveCandidates() {
  static const std::vector<AdaptiveCandidate> candidates = {
      Candidate("learned", "learned"),
      Candidate("learned-all", "learned", {.learned_features = kAllPageFeatures}),
      Candidate("lru", "lru"),
      Candidate("prefix-lru", "prefix-lru"),
      Candidate("s3fifo-5", "s3fifo", {.s3fifo_small_ratio = 0.05}),
      Candidate("s3fifo-10", "s3fifo", {.s3fifo_small_ratio = 0.10}),
      Candidate("s3fifo-25", "s3fifo", {.s3fifo_small_ratio = 0.25}),
      Candidate("slru-50", "slru", {.slru_protected_ratio = 0.5}),
      Candidate("slru-80", "slru", {.slru_protected_ratio = 0.8}),
      Candidate("sieve", "sieve"),
      Candidate("fifo", "fifo"),
  };
  return candidates;
}

AdaptivePolicy::AdaptivePolicy(const PolicyOptions& options,
                               std::vector<AdaptiveCandidate> candidates)
    : options_(options),
      candidates_(std::move(candidates)),
      capacity_(options.capacity),
      handover_(MakeCandidate(0, options.capacity)),
      selector_(candidates_.size(), 0) {
  StartSimulations(1.0);
}

std::unique_ptr<EvictionPolicy> AdaptivePolicy::MakeCandidate(size_t i, uint64_t capacity) const {
  const AdaptiveCandidate& c = candidates_[i];
  PolicyOptions options = c.options;
  options.capacity = capacity;
  options.seed = options_.seed + i;
  options.s3fifo_move_threshold = options_.s3fifo_move_threshold;
  auto policy = MakePolicy(c.policy, options);
  assert(policy.ok());
  return std::move(policy).value();
}

double AdaptivePolicy::SampleRate() const { return rate_; }

AdaptivePolicy::Slot AdaptivePolicy::LiveParent(const Entry& entry) const {
  return entry.parent == kNoParent ? kNil : table_.Find(entry.parent);
}

InsertInfo AdaptivePolicy::InfoOf(const Entry& entry) const {
  return {.parent = LiveParent(entry) != kNil ? entry.parent : kNoParent,
          .history = entry.history,
          .ends_write = entry.ends_write != 0};
}

bool AdaptivePolicy::Sampled(uint64_t history) const { return MixBits(history) <= threshold_; }

uint64_t AdaptivePolicy::AnchorBelow(Slot slot) {
  Settle(slot);
  return SettledBelow(table_.at(slot));
}

uint64_t AdaptivePolicy::AnchorBelowVictim(ObjectId parent) const {
  for (size_t back = 1; back <= kRecentVictims; ++back) {  // the newest first
    const RecentVictim& v =
        recent_victims_[(next_victim_slot_ + kRecentVictims - back) % kRecentVictims];
    if (v.id == parent) return v.anchor_below;
  }
  return kNoParent;
}

void AdaptivePolicy::Settle(Slot slot) {
  if (!Unsettled(table_.at(slot))) return;
  // Up the chain of the rate change to the first ancestor whose anchor is
  // settled (or kept, or to where the chain ended), then down again.
  std::vector<Slot> path;
  uint64_t anchor = kNoParent;
  for (Slot at = slot; at != kNil && path.size() <= table_.size();) {
    path.push_back(at);
    const ObjectId parent = table_.at(at).parent;
    at = kNil;
    if (parent == kNoParent) break;
    if (auto kept = kept_.find(parent); kept != kept_.end()) {
      if (kept->second.live) anchor = kept->second.below;
      break;
    }
    const Slot up = table_.Find(parent);
    if (up != kNil && !Unsettled(table_.at(up))) {
      anchor = SettledBelow(table_.at(up));
    } else {
      at = up;
    }
  }
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    Entry& entry = table_.at(*it);
    entry.anchor = anchor;
    entry.anchor_phase = phase_;
    anchor = SettledBelow(entry);
  }
}

void AdaptivePolicy::KeepBelow(Slot slot) {
  if (sweep_at_ >= sweep_end_) return;
  const ObjectId id = table_.at(slot).id;
  if (kept_.contains(id)) return;  // inserted since the rate change, or kept already
  kept_.emplace(id, KeptBelow{.live = true, .below = AnchorBelow(slot)});
}

void AdaptivePolicy::Sweep(size_t count) {
  for (; count > 0 && sweep_at_ < sweep_end_; --count, ++sweep_at_) {
    const Slot slot = static_cast<Slot>(sweep_at_);
    if (table_.at(slot).live) Settle(slot);
  }
  if (sweep_at_ >= sweep_end_) kept_.clear();
}

void AdaptivePolicy::EraseEntry(Slot slot) {
  KeepBelow(slot);
  Entry& entry = table_.at(slot);
  // Only a sampled entry is in sampled_ids_: most victims skip that probe.
  if (Sampled(entry.history)) sampled_ids_.erase(entry.id);
  entry.live = 0;
  table_.Erase(slot);
}

void AdaptivePolicy::ErasePendingVictim() {
  if (!evicted_id_) return;
  const Slot slot = table_.Find(*evicted_id_);
  assert(slot != kNil);
  recent_victims_[next_victim_slot_] = {*evicted_id_, AnchorBelow(slot)};
  next_victim_slot_ = (next_victim_slot_ + 1) % kRecentVictims;
  EraseEntry(slot);
  evicted_id_.reset();
}

void AdaptivePolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& info) {
  ErasePendingVictim();
  assert(size < (uint64_t{1} << 61));
  Entry entry{.id = id,
              .history = info.history == kSameAsId ? id : info.history,
              .anchor = kNoParent,
              .parent = kNoParent,
              .size = size,
              .ends_write = info.ends_write,
              .live = 1,
              .anchor_phase = phase_};
  if (info.parent != kNoParent) {
    if (const Slot parent = table_.Find(info.parent); parent != kNil) {
      entry.parent = info.parent;
      entry.anchor = AnchorBelow(parent);
    } else {
      entry.anchor = AnchorBelowVictim(info.parent);
    }
  }
  const Slot slot = table_.Add(id);
  assert(slot != kNil && "Insert() of an id that is already tracked");
  if (slot == kNil) return;
  table_.at(slot) = entry;
  // Not live at the rate change, whatever it was before.
  if (sweep_at_ < sweep_end_) kept_.try_emplace(id, KeptBelow{.live = false, .below = 0});
  handover_.Insert(id, size, info);
  // Too many objects sampled for bounded simulations: a lower rate.
  if (rate_ * static_cast<double>(table_.size()) > 2.0 * kMiniObjects) {
    StartSimulations(static_cast<double>(kMiniObjects) / static_cast<double>(table_.size()));
  }
  Sweep(kSweepStep);
  if (Sampled(table_.at(slot).history)) sampled_ids_.insert(id);
  Simulate(slot);
}

ObjectId AdaptivePolicy::ParentOf(ObjectId id) const {
  const Slot slot = table_.Find(id);
  if (slot == kNil || LiveParent(table_.at(slot)) == kNil) return kNoParent;
  return table_.at(slot).parent;
}

void AdaptivePolicy::Link(ObjectId child, ObjectId parent) {
  const Slot slot = table_.Find(child);
  const Slot p = table_.Find(parent);
  if (slot == kNil || p == kNil || child == parent || LiveParent(table_.at(slot)) != kNil) {
    return;
  }
  KeepBelow(slot);
  const uint64_t anchor = AnchorBelow(p);
  Entry& entry = table_.at(slot);
  entry.parent = parent;
  entry.anchor = anchor;
  entry.anchor_phase = phase_;
  handover_.Link(child, parent);
}

void AdaptivePolicy::Access(ObjectId id) {
  ErasePendingVictim();
  // The common case costs a probe of a small table that stays in cache: no
  // move in progress, and the object is not simulated.
  if (!handover_.Draining() && !sampled_ids_.contains(id)) {
    ++refs_;
    handover_.Access(id);
    return;
  }
  const Slot slot = table_.Find(id);
  if (slot == kNil) return;
  if (handover_.NeedsReadmit(id)) {
    const Entry& entry = table_.at(slot);
    handover_.Readmit(id, entry.size, InfoOf(entry));
  } else {
    handover_.Access(id);
  }
  Simulate(slot);
}

void AdaptivePolicy::Remove(ObjectId id) {
  ErasePendingVictim();
  const Slot slot = table_.Find(id);
  if (slot == kNil) return;
  handover_.Remove(id);
  EraseEntry(slot);
}

void AdaptivePolicy::EndSession(ObjectId id) {
  ErasePendingVictim();
  handover_.EndSession(id);
  if (!sampled_ids_.contains(id)) return;
  const Entry& entry = table_.at(table_.Find(id));
  pending_.push_back({.key = entry.history,
                      .anchor = kNoParent,
                      .size = 0,
                      .ends_write = false,
                      .ends_session = true});
  if (pending_.size() >= kBatch) RunPendingReferences();
}

std::optional<ObjectId> AdaptivePolicy::Evict(const SpareFn& spare) {
  ErasePendingVictim();
  if (!evicted_) {
    // Full for the first time: a capacity never given is what it holds now.
    if (capacity_ == 0) {
      RunPendingReferences();  // at the capacity they came under
      evicted_ = true;
      for (MiniSimulation& mini : minis_) mini.SetCapacity(MiniCapacity());
    }
    evicted_ = true;
  }
  std::optional<ObjectId> victim = handover_.Evict(spare);
  if (victim) {
    table_.PrefetchIndex(*victim);
    evicted_id_ = victim;
  }
  return victim;
}

void AdaptivePolicy::SetCapacity(uint64_t capacity) {
  ErasePendingVictim();
  RunPendingReferences();  // at the capacity they came under
  capacity_ = capacity;
  handover_.SetCapacity(capacity);
  for (MiniSimulation& mini : minis_) mini.SetCapacity(MiniCapacity());
}

uint64_t AdaptivePolicy::MiniCapacity() const {
  // Before the owner names a capacity and before the cache is first full, the
  // simulations hold whatever is sampled.
  const uint64_t live = capacity_ != 0 ? capacity_ : evicted_ ? handover_.UsedSize() : ~0ull;
  if (live == ~0ull) return live;
  return std::max<uint64_t>(1, static_cast<uint64_t>(rate_ * static_cast<double>(live)));
}

void AdaptivePolicy::StartSimulations(double rate) {
  const uint64_t before = threshold_;
  rate_ = std::min(1.0, rate);
  threshold_ = rate_ >= 1.0 ? ~0ull : static_cast<uint64_t>(rate_ * static_cast<double>(~0ull));
  assert(threshold_ <= before);
  recent_victims_.fill({});  // their anchors were taken at the old rate
  // Every id sampled now was sampled before (the threshold only falls).
  for (auto it = sampled_ids_.begin(); it != sampled_ids_.end();) {
    if (Sampled(table_.at(table_.Find(*it)).history)) {
      ++it;
    } else {
      sampled_ids_.erase(it++);
    }
  }
  if (before != threshold_) {
    // Unsettle every anchor (see phase_); the last sweep finishes first.
    Sweep(~size_t{0});
    phase_ = !phase_;
    sweep_at_ = 1;
    sweep_end_ = table_.raw_nodes().size();
  }
  RestartSimulations();
}

void AdaptivePolicy::RestartSimulations() {
  window_refs_ = 0;
  pending_.clear();  // references of the simulations being dropped
  minis_.clear();
  const uint64_t capacity = MiniCapacity();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    minis_.emplace_back(MakeCandidate(i, capacity), capacity);
  }
  minis_.emplace_back(MakeCandidate(followed_, capacity), capacity);  // the twin
  rehearsal_.reset();
  selector_ = CandidateSelector(candidates_.size(), followed_);
}

std::unique_ptr<EvictionPolicy> AdaptivePolicy::Successor(size_t i, uint64_t capacity) const {
  std::unique_ptr<EvictionPolicy> next = MakeCandidate(i, capacity);
  // A learned policy starts from what its simulation has learned, not cold.
  auto* learned = dynamic_cast<LearnedPolicy*>(next.get());
  auto* taught = dynamic_cast<const LearnedPolicy*>(&minis_[i].policy());
  if (learned != nullptr && taught != nullptr) learned->AdoptLearning(*taught, rate_ >= 1.0);
  return next;
}

void AdaptivePolicy::Simulate(Slot slot) {
  ++refs_;
  if (!Sampled(table_.at(slot).history)) return;
  Settle(slot);
  const Entry& entry = table_.at(slot);
  pending_.push_back({entry.history, entry.anchor, entry.size, entry.ends_write != 0});
  if (++window_refs_ >= window_) {
    RunPendingReferences();
    EndWindow();
  } else if (pending_.size() >= kBatch) {
    RunPendingReferences();
  }
}

void AdaptivePolicy::RunPendingReferences() {
  // One simulation at a time: its tables stay in cache through the batch,
  // where a reference at a time through every simulation would load all of
  // theirs for each. Each still sees the references in order, so the
  // results are the same.
  constexpr size_t kAhead = 4;  // lookups loading while one runs
  for (MiniSimulation& mini : minis_) {
    for (size_t i = 0; i < std::min(kAhead, pending_.size()); ++i) mini.Prefetch(pending_[i].key);
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (i + kAhead < pending_.size()) mini.Prefetch(pending_[i + kAhead].key);
      const SampledReference& r = pending_[i];
      if (r.ends_session) {
        mini.EndSession(r.key);
      } else {
        mini.Reference(r.key, r.anchor, r.size, r.ends_write);
      }
    }
  }
  pending_.clear();
}

void AdaptivePolicy::EndWindow() {
  window_refs_ = 0;
  window_ = std::max<uint64_t>(kMinWindow,
                               static_cast<uint64_t>(rate_ * static_cast<double>(table_.size())));
  std::vector<MiniSimulation::Window> windows;
  std::vector<double> ratios;
  windows.reserve(minis_.size());
  ratios.reserve(candidates_.size());
  for (MiniSimulation& mini : minis_) windows.push_back(mini.TakeWindow());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    const MiniSimulation::Window& w = windows[i];
    ratios.push_back(w.refs == 0 ? 0.0 : static_cast<double>(w.hits) / w.refs);
  }
  if (rehearsal_) {
    EndRehearsalWindow(windows);
  } else if (selector_.Update(ratios, !handover_.Draining())) {
    // The selector follows the winner now; the live cache waits for the
    // rehearsal of the move.
    rehearsal_ = Rehearsal{.target = selector_.followed()};
    minis_.back().Switch(Successor(rehearsal_->target, MiniCapacity()));
  }
  Record(ratios);
}

void AdaptivePolicy::EndRehearsalWindow(const std::vector<MiniSimulation::Window>& windows) {
  rehearsal_->moved_hits += windows.back().hits;
  rehearsal_->stay_hits += windows[followed_].hits;
  if (++rehearsal_->windows < kRehearsalWindows) return;
  if (rehearsal_->moved_hits > rehearsal_->stay_hits) {
    assert(!handover_.Draining());
    handover_.Switch(Successor(rehearsal_->target, capacity_));
    followed_ = rehearsal_->target;
    ++moves_;
  } else {
    ++rejected_;
  }
  // The twin has moved: start over, so that it matches the followed one again.
  RestartSimulations();
}

void AdaptivePolicy::Record(const std::vector<double>& ratios) {
  if (windows_++ % record_every_ != 0) return;
  if (timeline_.size() == kMaxTimeline) {
    for (size_t i = 0; i < kMaxTimeline / 2; ++i) timeline_[i] = std::move(timeline_[2 * i]);
    timeline_.resize(kMaxTimeline / 2);
    record_every_ *= 2;
  }
  timeline_.push_back(
      {refs_, std::vector<float>(ratios.begin(), ratios.end()), static_cast<uint32_t>(followed_)});
}

}  // namespace crescent::cache
