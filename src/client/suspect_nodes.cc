#include "client/suspect_nodes.h"

#include <algorithm>

namespace crescent::client {

void SuspectNodes::Mark(const std::string& endpoint, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (until_.size() >= kMaxEntries && !until_.contains(endpoint)) {
    absl::erase_if(until_, [&](const auto& e) { return e.second <= now_ms; });
    if (until_.size() >= kMaxEntries) {
      auto oldest = std::min_element(until_.begin(), until_.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      });
      until_.erase(oldest);
    }
  }
  until_[endpoint] = now_ms + hold_ms_;
}

bool SuspectNodes::IsSuspect(const std::string& endpoint, int64_t now_ms) const {
  std::lock_guard lock(mu_);
  auto it = until_.find(endpoint);
  return it != until_.end() && it->second > now_ms;
}

size_t SuspectNodes::size() const {
  std::lock_guard lock(mu_);
  return until_.size();
}

}  // namespace crescent::client
