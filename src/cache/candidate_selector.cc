#include "cache/candidate_selector.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace crescent::cache {

CandidateSelector::CandidateSelector(size_t candidates, size_t initial)
    : lead_(candidates, 0.0), lead_sq_(candidates, 0.0), followed_(initial) {
  assert(initial < candidates);
}

bool CandidateSelector::Significant(size_t i) const {
  // Effective number of windows of a weighted mean: (Σw)² / Σw².
  const double n = weights_ * weights_ / weights_sq_;
  const double variance = std::max(0.0, lead_sq_[i] - lead_[i] * lead_[i]);
  return lead_[i] > kConfidence * std::sqrt(variance / n);
}

bool CandidateSelector::Update(std::span<const double> ratios, bool may_move) {
  assert(ratios.size() == lead_.size());
  // Older windows' weights decay by 1 - kNewestWeight, the newest weighs 1;
  // the means are exact from the first window on.
  const double old_weight = weights_ * (1 - kNewestWeight);
  const double keep = old_weight / (old_weight + 1);
  for (size_t i = 0; i < lead_.size(); ++i) {
    const double d = ratios[i] - ratios[followed_];
    lead_[i] = keep * lead_[i] + (1 - keep) * d;
    lead_sq_[i] = keep * lead_sq_[i] + (1 - keep) * d * d;
  }
  ratio_ = keep * ratio_ + (1 - keep) * ratios[followed_];
  weights_ = old_weight + 1;
  weights_sq_ = weights_sq_ * (1 - kNewestWeight) * (1 - kNewestWeight) + 1;
  ++windows_;

  const size_t leader =
      static_cast<size_t>(std::max_element(lead_.begin(), lead_.end()) - lead_.begin());
  const double margin = std::max(kMarginAbsolute, kMarginRelative * ratio_);
  if (windows_ <= static_cast<size_t>(kWarmupWindows) || leader == followed_ ||
      lead_[leader] <= margin || !Significant(leader)) {
    streak_ = 0;
    return false;
  }
  streak_ = leader == challenger_ ? streak_ + 1 : 1;
  challenger_ = leader;
  if (streak_ < kConfirmWindows || !may_move) return false;
  // Leads are measured against the followed candidate: start them over.
  followed_ = leader;
  streak_ = 0;
  std::fill(lead_.begin(), lead_.end(), 0.0);
  std::fill(lead_sq_.begin(), lead_sq_.end(), 0.0);
  ratio_ = 0;
  weights_ = weights_sq_ = 0;
  windows_ = 0;
  return true;
}

}  // namespace crescent::cache
