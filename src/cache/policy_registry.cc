// The policy registry: one line per policy.
#include <memory>

#include "cache/adaptive_policy.h"
#include "cache/eviction_policy.h"
#include "cache/fifo_policy.h"
#include "cache/learned_policy.h"
#include "cache/lru_policy.h"
#include "cache/prefix_lru_policy.h"
#include "cache/s3fifo_policy.h"
#include "cache/sieve_policy.h"
#include "cache/slru_policy.h"

namespace crescent::cache {
namespace {

struct Registration {
  std::string_view name;
  std::unique_ptr<EvictionPolicy> (*make)(const PolicyOptions&);
};

template <typename Policy>
std::unique_ptr<EvictionPolicy> Make(const PolicyOptions& options) {
  return std::make_unique<Policy>(options);
}

constexpr Registration kPolicies[] = {
    {"fifo", &Make<FifoPolicy>},       {"lru", &Make<LruPolicy>},
    {"sieve", &Make<SievePolicy>},     {"s3fifo", &Make<S3FifoPolicy>},
    {"slru", &Make<SlruPolicy>},       {"prefix-lru", &Make<PrefixLruPolicy>},
    {"learned", &Make<LearnedPolicy>}, {"adaptive", &Make<AdaptivePolicy>},
};

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& policy : kPolicies) all.emplace_back(policy.name);
    return all;
  }();
  return names;
}

StatusOr<std::unique_ptr<EvictionPolicy>> MakePolicy(std::string_view name,
                                                     const PolicyOptions& options) {
  for (const auto& policy : kPolicies) {
    if (policy.name == name) return policy.make(options);
  }
  return Status(ErrorCode::kInvalidArgument, "unknown eviction policy '" + std::string(name) + "'");
}

}  // namespace crescent::cache
