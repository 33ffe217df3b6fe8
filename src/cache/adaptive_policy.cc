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

AdaptivePolicy::Slot AdaptivePolicy::LiveParent(const Node& node) const {
  if (node.parent == Table::kNil) return Table::kNil;
  const Node& p = table_.at(node.parent);
  // A stale link: the parent left (and its slot may hold another object).
  return p.generation == node.parent_generation ? node.parent : Table::kNil;
}

InsertInfo AdaptivePolicy::InfoOf(const Node& node) const {
  const Slot parent = LiveParent(node);
  return {.parent = parent == Table::kNil ? kNoParent : table_.at(parent).Id(),
          .history = node.history,
          .ends_write = node.ends_write};
}

bool AdaptivePolicy::Sampled(uint64_t history) const { return MixBits(history) <= threshold_; }

uint64_t AdaptivePolicy::AnchorBelow(Slot slot) const {
  const Node& node = table_.at(slot);
  return Sampled(node.history) ? node.history : node.anchor;
}

void AdaptivePolicy::ComputeAnchors() {
  // Parents before children: walk up from each page to the first ancestor
  // whose anchor is settled (or to a root), then settle the path downwards.
  std::vector<bool> settled;
  std::vector<Slot> path;
  auto is_settled = [&](Slot s) { return s < settled.size() && settled[s]; };
  auto settle = [&](Slot s) {
    if (s >= settled.size()) settled.resize(s + 1);
    settled[s] = true;
  };
  table_.ForEach([&](Slot slot, Node&) {
    path.clear();
    for (Slot s = slot; s != Table::kNil && !is_settled(s); s = LiveParent(table_.at(s))) {
      path.push_back(s);
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const Slot parent = LiveParent(table_.at(*it));
      table_.at(*it).anchor = parent == Table::kNil ? kNoParent : AnchorBelow(parent);
      settle(*it);
    }
  });
}

void AdaptivePolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& info) {
  const Slot parent = info.parent == kNoParent ? Table::kNil : table_.Find(info.parent);
  const Slot slot = table_.Add(id);
  assert(slot != Table::kNil && "Insert() of an id that is already tracked");
  if (slot == Table::kNil) return;
  Node& node = table_.at(slot);
  node.history = info.history == kSameAsId ? id : info.history;
  node.size = size;
  node.ends_write = info.ends_write;
  node.anchor = kNoParent;
  if (parent != Table::kNil) {
    node.parent = parent;
    node.parent_generation = table_.at(parent).generation;
    node.anchor = AnchorBelow(parent);
  }
  handover_.Insert(id, size, info);
  Simulate(slot);
}

void AdaptivePolicy::Access(ObjectId id) {
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return;
  const Node& node = table_.at(slot);
  if (handover_.NeedsReadmit(id)) {
    handover_.Readmit(id, node.size, InfoOf(node));
  } else {
    handover_.Access(id);
  }
  Simulate(slot);
}

void AdaptivePolicy::Remove(ObjectId id) {
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return;
  handover_.Remove(id);
  table_.Erase(slot);
}

std::optional<ObjectId> AdaptivePolicy::Evict(const SpareFn& spare) {
  if (!evicted_) {
    // Full for the first time: a capacity never given is what it holds now.
    evicted_ = true;
    if (capacity_ == 0) {
      for (MiniSimulation& mini : minis_) mini.SetCapacity(MiniCapacity());
    }
  }
  std::optional<ObjectId> victim = handover_.Evict(spare);
  if (victim) {
    const Slot slot = table_.Find(*victim);
    assert(slot != Table::kNil);
    if (slot != Table::kNil) table_.Erase(slot);
  }
  return victim;
}

void AdaptivePolicy::SetCapacity(uint64_t capacity) {
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
  rate_ = std::min(1.0, rate);
  threshold_ = rate_ >= 1.0 ? ~0ull : static_cast<uint64_t>(rate_ * static_cast<double>(~0ull));
  window_refs_ = 0;
  ComputeAnchors();
  minis_.clear();
  const uint64_t capacity = MiniCapacity();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    minis_.emplace_back(MakeCandidate(i, capacity), capacity);
  }
  selector_ = CandidateSelector(candidates_.size(), selector_.followed());
}

void AdaptivePolicy::Simulate(Slot slot) {
  ++refs_;
  // Too many objects sampled for bounded simulations: a lower rate.
  const double sampled = rate_ * static_cast<double>(table_.size());
  if (sampled > 2.0 * kMiniObjects) {
    StartSimulations(static_cast<double>(kMiniObjects) / static_cast<double>(table_.size()));
  }
  const Node& node = table_.at(slot);
  if (!Sampled(node.history)) return;
  for (MiniSimulation& mini : minis_) {
    mini.Reference(node.history, node.anchor, node.size, node.ends_write);
  }
  if (++window_refs_ >= window_) EndWindow();
}

void AdaptivePolicy::EndWindow() {
  window_refs_ = 0;
  window_ = std::max<uint64_t>(kMinWindow,
                               static_cast<uint64_t>(rate_ * static_cast<double>(table_.size())));
  std::vector<double> ratios;
  ratios.reserve(minis_.size());
  for (MiniSimulation& mini : minis_) {
    const MiniSimulation::Window w = mini.TakeWindow();
    ratios.push_back(w.refs == 0 ? 0.0 : static_cast<double>(w.hits) / w.refs);
  }
  if (selector_.Update(ratios, !handover_.Draining())) {
    std::unique_ptr<EvictionPolicy> next = MakeCandidate(selector_.followed(), capacity_);
    // A learned policy starts from what its simulation has learned, not cold.
    auto* learned = dynamic_cast<LearnedPolicy*>(next.get());
    auto* taught = dynamic_cast<const LearnedPolicy*>(&minis_[selector_.followed()].policy());
    if (learned != nullptr && taught != nullptr) learned->AdoptLearning(*taught, rate_ >= 1.0);
    handover_.Switch(std::move(next));
    ++moves_;
  }
  Record(ratios);
}

void AdaptivePolicy::Record(const std::vector<double>& ratios) {
  if (windows_++ % record_every_ != 0) return;
  if (timeline_.size() == kMaxTimeline) {
    for (size_t i = 0; i < kMaxTimeline / 2; ++i) timeline_[i] = std::move(timeline_[2 * i]);
    timeline_.resize(kMaxTimeline / 2);
    record_every_ *= 2;
  }
  timeline_.push_back({refs_, std::vector<float>(ratios.begin(), ratios.end()),
                       static_cast<uint32_t>(selector_.followed())});
}

}  // namespace crescent::cache
