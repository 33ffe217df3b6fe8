#include "replay/sequencer.h"

#include <algorithm>
#include <thread>

namespace crescent::replay {

ArrivalSequencer::ArrivalSequencer(std::vector<double> release_ms)
    : release_ms_(std::move(release_ms)), start_(std::chrono::steady_clock::now()) {}

void ArrivalSequencer::Start() { start_ = std::chrono::steady_clock::now(); }

double ArrivalSequencer::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
      .count();
}

std::optional<size_t> ArrivalSequencer::Take() {
  turn_.lock();
  if (next_ >= release_ms_.size()) {
    turn_.unlock();
    return std::nullopt;
  }
  const size_t i = next_++;
  const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double, std::milli>(release_ms_[i]));
  if (std::chrono::steady_clock::now() < due) std::this_thread::sleep_until(due);
  const double lag = elapsed_ms() - release_ms_[i];
  {
    std::lock_guard lock(stats_mu_);
    max_lag_ms_ = std::max(max_lag_ms_, lag);
  }
  return i;  // the caller holds turn_
}

void ArrivalSequencer::Release() { turn_.unlock(); }

double ArrivalSequencer::max_lag_ms() const {
  std::lock_guard lock(stats_mu_);
  return max_lag_ms_;
}

}  // namespace crescent::replay
