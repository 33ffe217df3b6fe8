// The policy registry: one line per policy.
#include "cache/eviction_policy.h"

namespace crescent::cache {

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = {};
  return names;
}

StatusOr<std::unique_ptr<EvictionPolicy>> MakePolicy(std::string_view name,
                                                     const PolicyOptions& options) {
  return Status(ErrorCode::kInvalidArgument, "unknown eviction policy '" + std::string(name) + "'");
}

}  // namespace crescent::cache
