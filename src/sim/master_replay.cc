#include "sim/master_replay.h"

#include <string>
#include <vector>

#include "common/clock.h"
#include "master/master_service.h"
#include "sim/page_key.h"

namespace crescent::sim {

namespace {
constexpr uint64_t kBlockBytes = 4096;
}  // namespace

StatusOr<SimStats> ReplayThroughMaster(const Trace& trace, uint64_t capacity_blocks,
                                       std::string_view policy, int s3fifo_threshold,
                                       const SimProgressFn& progress, std::string_view key_prefix) {
  if (capacity_blocks == 0) return Status(ErrorCode::kInvalidArgument, "capacity must be > 0");
  master::MasterConfig config;
  config.eviction_policy = std::string(policy);
  config.s3fifo_move_threshold = s3fifo_threshold;
  config.high_watermark = 1.0;
  config.lease_ms = 1;
  // No capability leaves this process and no clock is skewed: freed space is
  // reusable as soon as the last lease on it ends, as in the simulator.
  config.capability_grace_ms = 0;
  config.allocation_alignment = kBlockBytes;
  config.bloom_expected_keys = trace.distinct_blocks() + 1;
  ManualClock clock;
  auto created = master::MasterService::Create(config, clock);
  if (!created.ok()) return created.status();
  master::MasterService& m = **created;
  auto seg = m.MountSegment(
      {"replay", capacity_blocks * kBlockBytes, "replay-node", "local", master::Tier::kDram});
  if (!seg.ok()) return seg.status();

  std::vector<std::string> names(trace.distinct_blocks());
  for (size_t b = 0; b < names.size(); ++b) names[b] = PageKey(key_prefix, trace.block_keys[b]);

  SimStats stats;
  std::vector<std::string> keys;
  uint64_t done = 0;
  for (const TraceRequest& r : trace.requests) {
    std::span<const BlockId> blocks = trace.BlocksOf(r);
    keys.clear();
    for (BlockId b : blocks) keys.push_back(names[b]);
    auto prefix = m.BatchQueryPrefix(keys);
    if (!prefix.ok()) return prefix.status();
    stats.requests++;
    stats.block_refs += blocks.size();
    stats.hit_blocks += *prefix;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (m.GetReplicaList(keys[i]).ok()) {
        clock.Advance(2);  // the 1 ms lease has lapsed before the next decision
        continue;
      }
      master::PutConfig put;
      if (i > 0) put.parent_key = keys[i - 1];
      put.ends_write = i + 1 == keys.size();  // as the simulator marks a request's last page
      auto start = m.PutStart(keys[i], kBlockBytes, put);
      if (!start.ok()) return start.status();
      if (Status s = m.PutEnd(keys[i], start->token); !s.ok()) return s;
    }
    done += blocks.size();
    if (progress && (stats.requests & 63) == 0) progress(done);
  }
  return stats;
}

}  // namespace crescent::sim
