// ReuseModel: learns, online, how likely a page of each class is to be used
// again at each age, and turns that into a hit density (LHD: Beckmann et al.,
// "LHD: Improving Cache Hit Rate by Maximizing Hit Density", NSDI'18).
//
// The density of a page of class c at age a (references since its last use) is
//   D(c, a) = P(its next use comes after a) / E[references it still occupies]
//           = Σ_{x≥a} H[c][x] / Σ_{x≥a} (x − a + 1) (H[c][x] + E[c][x]),
// where H[c][x] counts reuses at age x and E[c][x] lifetimes that ended
// without one. The policy evicts the page of least density per unit of size.
//
// Unlike LHD, whose statistics come from the cache itself (a page it evicted
// never shows the reuse it would have had, so what it evicts early looks worse
// than it is), the statistics here are uncensored: the model follows a
// spatially sampled set of keys through every reference, cached or not
// (SHARDS: Waldspurger et al., FAST'15). A tracked key's next reference records
// a reuse at its age; a key silent for the horizon (4 × the cache's object
// count) records a lifetime ending there. The sample keeps at most
// kMaxTracked keys: when it outgrows that, the sampling threshold halves and the
// keys above it are dropped (SHARDS' fixed-size variant). Densities are
// ratios, so the sampling rate cancels out.
//
// Learning: Learn() recomputes every density from the statistics and then
// decays them by kDecay; the owner calls it once per epoch (as many references
// as it has objects), so a workload that changes is followed within a few
// epochs. A class with few observations is blended with its coarse class
// (page_class.h) by kPriorEvents pseudo-observations, so a class never seen
// starts at its coarse class's density, not at zero. Nothing here is fitted to
// a trace: the model starts empty and everything it uses is learned.
//
// Ages are counted in units of horizon / kAges references; the unit follows
// the object count, and the histograms are re-binned when it changes.
//
// Memory: the tracked sample (at most kMaxTracked keys, about 48 bytes each)
// and 2 tables of kPageClasses × kAges doubles (about 300 KiB), independent of
// the cache's size. Not thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>

#include "cache/page_class.h"

namespace crescent::cache {

class ReuseModel {
 public:
  static constexpr int kAges = 128;
  static constexpr uint64_t kHorizonObjects = 4;  // the horizon, in object counts
  static constexpr size_t kMaxTracked = 1 << 15;
  static constexpr double kDecay = 0.9;
  static constexpr double kPriorEvents = 16;

  explicit ReuseModel(uint32_t features);

  // One reference of the key whose (well-mixed) hash is `key`, at reference
  // time `now` (non-decreasing); after it the page is in class `cls`.
  void Observe(uint64_t key, uint8_t cls, uint64_t now);

  // Recomputes the densities for a cache of `objects` objects, then decays the
  // statistics.
  void Learn(uint64_t objects, uint64_t now);

  // The density of a page of class `cls` unused for `age` references: 0 past
  // the horizon, where no reuse was ever counted.
  double Density(uint8_t cls, uint64_t age) const {
    const uint64_t bucket = age / unit_;
    return bucket < kAges ? density_[cls][bucket] : 0.0;
  }

  // Takes `other`'s statistics and densities (not its tracked keys): a model
  // learned on a sample of the same workload is a good start. Ages are in
  // buckets of a horizon, which both scale with their own object counts.
  void AdoptStatistics(const ReuseModel& other);

  uint64_t unit() const { return unit_; }
  size_t tracked() const { return tracked_.size(); }
  // The fraction of keys followed (1, 1/2, 1/4, ...).
  double sample_rate() const;

 private:
  using Histogram = std::array<double, kAges>;
  struct Track {
    uint64_t stamp;  // reference time of the key's last reference
    uint8_t cls;     // its page's class after that reference
  };
  struct Expiry {
    uint64_t stamp;
    uint64_t key;
  };

  bool Sampled(uint64_t key) const { return key <= threshold_; }
  void ExpireBefore(uint64_t now);
  void Rebin(uint64_t unit);
  void Shrink();

  const uint32_t features_;
  uint64_t unit_ = 1;
  uint64_t horizon_ = kAges;    // unit_ × kAges
  uint64_t threshold_ = ~0ull;  // keys whose hash is at most this are tracked
  std::array<Histogram, kPageClasses> hits_{};
  std::array<double, kPageClasses> ends_{};  // lifetimes that reached the horizon
  std::array<Histogram, kPageClasses> density_{};
  bool whole_lifetime_ = false;  // some lifetime has reached the horizon
  absl::flat_hash_map<uint64_t, Track> tracked_;
  std::deque<Expiry> expiry_;  // one per tracked reference, in time order
};

}  // namespace crescent::cache
