// Whether a master server refuses calls (MasterServer::BeginDrain), and why:
// clients read the reason in the UNAVAILABLE they get (the master shuts down,
// or it no longer leads its cluster, docs/ha.md). Begin() sets the reason once,
// before the flag with release order; readers that see the flag read it.
#pragma once

#include <atomic>
#include <string>

namespace crescent::rpc {

class DrainState {
 public:
  void Begin(std::string why) {
    if (begun_.exchange(true, std::memory_order_acq_rel)) return;
    why_ = std::move(why);
    on_.store(true, std::memory_order_release);
  }
  bool on() const { return on_.load(std::memory_order_acquire); }
  // Only once on() said true.
  const std::string& why() const { return why_; }

 private:
  std::atomic<bool> begun_{false};
  std::atomic<bool> on_{false};
  std::string why_;
};

inline constexpr const char* kShuttingDown = "the master is shutting down";

}  // namespace crescent::rpc
