// ArrivalSequencer: hands the requests of a replay to N concurrent streams in
// arrival order. Take() gives each caller the next request index, waits until
// that request's release time, and returns while the caller holds the
// sequencer's turn; the caller issues the request's first step (the prefix
// lookup) and then calls Release(). So request i's lookup is *sent and answered*
// before request i+1 may be taken: the master sees the lookups in arrival order.
// Everything after the lookup (gets and puts) overlaps across streams.
//
// Thread-safe. Time comes from std::chrono::steady_clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace crescent::replay {

class ArrivalSequencer {
 public:
  // release_ms[i]: request i's release offset from Start(); non-decreasing.
  explicit ArrivalSequencer(std::vector<double> release_ms);

  // Fixes time zero. Call once before the streams start.
  void Start();
  // The next request index, after waiting for its release time, or nullopt when
  // all were taken. On a value the caller holds the turn until Release().
  std::optional<size_t> Take();
  void Release();

  // How late, at most, a request was taken after its release time (ms).
  double max_lag_ms() const;
  double elapsed_ms() const;

 private:
  std::vector<double> release_ms_;
  std::chrono::steady_clock::time_point start_;
  std::mutex turn_;                // held from Take() to Release()
  size_t next_ = 0;                // guarded by turn_
  mutable std::mutex stats_mu_;
  double max_lag_ms_ = 0;          // guarded by stats_mu_
};

}  // namespace crescent::replay
