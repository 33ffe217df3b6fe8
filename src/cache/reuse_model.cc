#include "cache/reuse_model.h"

#include <algorithm>
#include <vector>

namespace crescent::cache {

ReuseModel::ReuseModel(uint32_t features) : features_(features) {}

double ReuseModel::sample_rate() const {
  return static_cast<double>(threshold_) / static_cast<double>(~0ull);
}

void ReuseModel::Observe(uint64_t key, uint8_t cls, uint64_t now) {
  ExpireBefore(now);
  if (!Sampled(key)) return;
  auto [it, fresh] = tracked_.try_emplace(key, Track{now, cls});
  if (!fresh) {
    const uint64_t bucket = (now - it->second.stamp) / unit_;
    if (bucket < kAges) hits_[it->second.cls][bucket] += 1;
    it->second = Track{now, cls};
  }
  expiry_.push_back({now, key});
  if (tracked_.size() > kMaxTracked) Shrink();
}

void ReuseModel::ExpireBefore(uint64_t now) {
  // A key whose last reference is a horizon old ends its lifetime there. Older
  // references of a key still tracked are stale entries: skipped.
  while (!expiry_.empty() && expiry_.front().stamp + horizon_ <= now) {
    const Expiry e = expiry_.front();
    expiry_.pop_front();
    auto it = tracked_.find(e.key);
    if (it == tracked_.end() || it->second.stamp != e.stamp) continue;
    ends_[it->second.cls] += 1;
    whole_lifetime_ = true;
    tracked_.erase(it);
  }
}

void ReuseModel::AdoptStatistics(const ReuseModel& other) {
  hits_ = other.hits_;
  ends_ = other.ends_;
  whole_lifetime_ = other.whole_lifetime_;
  density_ = other.density_;
}

void ReuseModel::Shrink() {
  threshold_ /= 2;
  absl::erase_if(tracked_, [&](const auto& entry) { return !Sampled(entry.first); });
  std::erase_if(expiry_, [&](const Expiry& e) { return !Sampled(e.key); });
}

void ReuseModel::Rebin(uint64_t unit) {
  // A count at old bucket b covered ages [b × old, (b + 1) × old); it moves to
  // the new bucket of that range's start. Counts past the new range are dropped.
  for (Histogram& h : hits_) {
    Histogram moved{};
    for (int b = 0; b < kAges; ++b) {
      const uint64_t to = static_cast<uint64_t>(b) * unit_ / unit;
      if (to < kAges) moved[to] += h[b];
    }
    h = moved;
  }
  unit_ = unit;
  horizon_ = unit_ * kAges;
}

void ReuseModel::Learn(uint64_t objects, uint64_t now) {
  const uint64_t unit = std::max<uint64_t>(1, kHorizonObjects * objects / kAges);
  if (unit != unit_) Rebin(unit);
  ExpireBefore(now);

  // The coarse classes' statistics, the prior of every class under them.
  std::array<Histogram, kPageClasses> coarse_hits{};
  std::array<double, kPageClasses> coarse_ends{};
  std::array<double, kPageClasses> coarse_total{};
  // Until one lifetime has reached the horizon, a class would show only its
  // reuses, never the pages that are not reused. The keys followed so far
  // then count as lifetimes ending at their age now (what they have occupied
  // at least), for this epoch's densities only.
  // (On the heap, and only then: the tables above already take 150 KiB of stack.)
  std::vector<Histogram> censored(whole_lifetime_ ? 0 : kPageClasses, Histogram{});
  std::vector<Histogram> coarse_censored(censored.size(), Histogram{});
  auto censored_at = [](const std::vector<Histogram>& h, int c, int a) {
    return h.empty() ? 0.0 : h[c][a];
  };
  std::array<double, kPageClasses> coarse_horizon_ends{};
  if (!whole_lifetime_) {
    for (const auto& [key, track] : tracked_) {
      const uint64_t bucket = (now - track.stamp) / unit_;
      censored[track.cls][std::min<uint64_t>(bucket, kAges - 1)] += 1;
    }
  }
  for (int c = 0; c < kPageClasses; ++c) {
    const uint8_t k = CoarseClassOf(static_cast<uint8_t>(c), features_);
    for (int a = 0; a < kAges; ++a) coarse_hits[k][a] += hits_[c][a];
    for (int a = 0; !censored.empty() && a < kAges; ++a) {
      coarse_censored[k][a] += censored[c][a];
      coarse_ends[k] += censored[c][a];  // counted in the total, placed by age below
    }
    coarse_ends[k] += ends_[c];
    coarse_horizon_ends[k] += ends_[c];
  }
  for (int k = 0; k < kPageClasses; ++k) {
    double total = coarse_ends[k];
    for (double h : coarse_hits[k]) total += h;
    coarse_total[k] = total;
  }

  for (int c = 0; c < kPageClasses; ++c) {
    const uint8_t k = CoarseClassOf(static_cast<uint8_t>(c), features_);
    const double w = coarse_total[k] > 0 ? kPriorEvents / coarse_total[k] : 0.0;
    // From the oldest age down: hits beyond a, events beyond a, and the sum
    // over those events of the references they still occupy.
    double hits_beyond = 0, events_beyond = 0, lifetime = 0;
    for (int a = kAges; a-- > 0;) {
      double ends = censored_at(censored, c, a) + w * censored_at(coarse_censored, k, a);
      if (a == kAges - 1) ends += ends_[c] + w * coarse_horizon_ends[k];
      const double h = hits_[c][a] + w * coarse_hits[k][a];
      hits_beyond += h;
      events_beyond += h + ends;
      lifetime += events_beyond;
      density_[c][a] = lifetime > 0 ? hits_beyond / lifetime : 0.0;
    }
  }
  for (Histogram& h : hits_) {
    for (double& x : h) x *= kDecay;
  }
  for (double& e : ends_) e *= kDecay;
}

}  // namespace crescent::cache
