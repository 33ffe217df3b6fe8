// A master engine for the perf programs: no gRPC, four DRAM segments of
// capacity for `objects` objects of `object_bytes` twice over (the master
// never touches payload memory, so capacity is only a number).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "master/master_service.h"

namespace crescent::perf {

// Null (the reason printed on stderr) when the engine cannot be made.
inline std::unique_ptr<master::MasterService> MakePerfMaster(const std::string& policy,
                                                             uint64_t objects,
                                                             uint64_t object_bytes) {
  master::MasterConfig config;
  config.bloom_expected_keys = objects;
  config.eviction_policy = policy;
  auto created = master::MasterService::Create(config);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return nullptr;
  }
  for (int s = 0; s < 4; ++s) {
    (void)(*created)->MountSegment({"seg-" + std::to_string(s),
                                    (objects / 4 + 4096) * object_bytes * 2,
                                    "node-" + std::to_string(s),
                                    "127.0.0.1:" + std::to_string(7000 + s), master::Tier::kDram});
  }
  return std::move(*created);
}

}  // namespace crescent::perf
