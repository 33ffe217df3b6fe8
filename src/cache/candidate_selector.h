// CandidateSelector: decides which candidate the adaptive policy's live cache
// follows, from the hit ratios of the candidates' miniature simulations over
// successive windows of sampled references.
//
// For every candidate it keeps an exponentially weighted mean of its lead over
// the followed candidate, window by window (lead = its window hit ratio minus
// the followed one's; the newest window weighs kNewestWeight, so the mean
// spans about 2 / kNewestWeight windows), and of the lead's square. The live
// cache moves to another candidate only when all of these hold:
//  - kWarmupWindows windows have passed since the simulations started or the
//    live cache last moved (the means restart then); the adaptive policy's
//    windows are about a cache turnover each, so that is the learned policy's
//    horizon, before which its model has not seen a whole lifetime and early
//    leads of the simple policies mean little;
//  - that candidate has the largest mean lead, and it exceeds the margin,
//    max(kMarginAbsolute, kMarginRelative × the followed candidate's mean
//    hit ratio), so near-ties never move it;
//  - the mean lead is kConfidence standard errors above zero: the windows'
//    own noise sets how much lead is evidence (a one-sided test on the
//    weighted mean, with its effective number of windows);
//  - all of that has held for kConfirmWindows windows in a row;
//  - the owner says a move may start (the previous move has completed).
// Those are what keeps it from flapping; docs/adaptive.md works out the
// reaction time they give. Pure logic: no clock, no I/O.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace crescent::cache {

class CandidateSelector {
 public:
  static constexpr double kNewestWeight = 0.0625;
  static constexpr double kMarginAbsolute = 0.004;
  static constexpr double kMarginRelative = 0.02;
  static constexpr double kConfidence = 2.0;
  static constexpr int kConfirmWindows = 4;
  static constexpr int kWarmupWindows = 4;

  CandidateSelector(size_t candidates, size_t initial);

  // One window's hit ratios, one per candidate. Returns true when the
  // followed candidate changed.
  bool Update(std::span<const double> ratios, bool may_move);

  size_t followed() const { return followed_; }
  // Candidate i's weighted mean lead over the followed one (0 for itself).
  double lead(size_t i) const { return lead_[i]; }
  // The followed candidate's weighted mean hit ratio.
  double followed_ratio() const { return ratio_; }

 private:
  bool Significant(size_t i) const;

  std::vector<double> lead_;     // weighted mean of (ratio_i − ratio_followed)
  std::vector<double> lead_sq_;  // weighted mean of its square
  double ratio_ = 0;             // weighted mean of the followed one's ratio
  double weights_ = 0;           // sum of the windows' weights (the newest weighs 1)
  double weights_sq_ = 0;        // sum of their squares (for the effective count)
  size_t followed_;
  size_t windows_ = 0;  // since the last restart of the means
  size_t challenger_ = 0;
  int streak_ = 0;
};

}  // namespace crescent::cache
