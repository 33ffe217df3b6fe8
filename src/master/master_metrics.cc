#include "master/master_metrics.h"

#include <string_view>

namespace crescent::master {
namespace {

struct Family {
  std::string_view name;
  std::string_view type;  // counter | gauge | histogram
  std::string_view help;
};

constexpr Family kFamilies[] = {
    {"crescent_requests_total", "counter", "Master API calls, by operation."},
    {"crescent_request_failures_total", "counter", "Keys that failed, by operation."},
    {"crescent_request_items_total", "counter", "Keys handled (a batch counts each key)."},
    {"crescent_exact_lookups_total", "counter", "Exact lookups (get, exists) by result."},
    {"crescent_prefix_keys_total", "counter",
     "Keys of prefix queries inside (hit) or after (miss) the returned prefix."},
    {"crescent_prefix_length", "histogram", "Leading-prefix length returned per query."},
    {"crescent_bloom_negatives_total", "counter", "Lookups answered by the Bloom filter alone."},
    {"crescent_bloom_rebuilds_total", "counter", "Bloom filter rebuilds."},
    {"crescent_evictions_total", "counter", "Objects evicted."},
    {"crescent_evicted_bytes_total", "counter", "Bytes freed by eviction."},
    {"crescent_eviction_rounds_total", "counter", "Eviction rounds."},
    {"crescent_expired_puts_total", "counter", "Puts discarded after the put timeout."},
    {"crescent_dropped_objects_total", "counter", "Objects that lost their last replica."},
    {"crescent_corrupt_replicas_total", "counter",
     "Replicas dropped because their node found the stored bytes did not match the value's "
     "checksum (after a reader's report, or a take-over's check)."},
    {"crescent_corrupt_objects_total", "counter",
     "Objects removed because their last replica failed its checksum."},
    {"crescent_corruption_reports_total", "counter",
     "Readers' reports of a replica that failed its checksum, by its node's verdict on the "
     "stored bytes: confirmed (they do not match: the replica dropped), disproved (they match: "
     "kept), unchecked (no verdict: kept)."},
    {"crescent_corruption_reports_pending", "gauge",
     "Readers' corruption reports waiting for their node's check."},
    {"crescent_tenant_quota_bytes", "gauge", "Each tenant's byte quota (0: none)."},
    {"crescent_tenant_bytes", "gauge",
     "Bytes of each tenant's objects, complete and pending (what counts against its quota)."},
    {"crescent_tenant_objects", "gauge", "Each tenant's complete objects."},
    {"crescent_tenant_hits_total", "counter", "Reads of each tenant that found their object."},
    {"crescent_tenant_misses_total", "counter", "Reads of each tenant that found none."},
    {"crescent_tenant_evictions_total", "counter",
     "Each tenant's objects evicted (for its quota, or for space)."},
    {"crescent_objects", "gauge", "Complete objects."},
    {"crescent_pending_puts", "gauge", "Puts started and not yet ended."},
    {"crescent_capacity_bytes", "gauge", "Capacity of the mounted segments."},
    {"crescent_used_bytes", "gauge", "Bytes allocated in the mounted segments."},
    {"crescent_held_bytes", "gauge",
     "Bytes of force-removed objects held until their read leases end (part of used)."},
    {"crescent_metadata_bytes", "gauge", "Estimated metadata memory of the master."},
    {"crescent_segments", "gauge", "Mounted segments."},
    {"crescent_segment_used_bytes", "gauge", "Bytes allocated, by segment."},
    {"crescent_segment_capacity_bytes", "gauge", "Capacity, by segment."},
    {"crescent_snapshots_total", "counter", "Snapshots of the metadata written (--data-dir)."},
    {"crescent_snapshot_failures_total", "counter", "Snapshots that failed."},
    {"crescent_last_snapshot_unix_ms", "gauge", "When the last snapshot was taken (0: none)."},
    {"crescent_last_snapshot_bytes", "gauge", "Size of the last snapshot file."},
    {"crescent_last_snapshot_objects", "gauge", "Objects in the last snapshot."},
    {"crescent_last_snapshot_duration_us", "gauge", "Time taken by the last snapshot."},
    {"crescent_last_snapshot_longest_lock_us", "gauge",
     "Longest engine lock held for the last snapshot (the serving pause it caused)."},
    {"crescent_log_bytes_since_snapshot", "gauge",
     "Operation log bytes appended since the last snapshot's position."},
    {"crescent_restore_duration_us", "gauge",
     "Time the start-up restore took until the master could serve (--data-dir)."},
    {"crescent_restore_completion_us", "gauge",
     "Time the restore's completion took after serving began (policy fill, key indexes, Bloom "
     "filter)."},
    {"crescent_restored_objects", "gauge", "Objects the start-up restore rebuilt."},
    {"crescent_restored_segments", "gauge", "Segments the start-up restore rebuilt."},
    {"crescent_restored_segments_waiting", "gauge",
     "Restored segments, and detached persistent ones, still waiting for a store node to take "
     "them over."},
    {"crescent_restore_adopted_segments_total", "counter",
     "Restored or detached segments taken over by their store node, objects and all."},
    {"crescent_pmem_detached_segments_total", "counter",
     "Persistent segments detached to wait for their node (it unmounted them or died)."},
    {"crescent_tier_reads_total", "counter",
     "Reads (replica lists granted), by the tier of the replicas given."},
    {"crescent_tier_moves_total", "counter",
     "Objects moved between tiers, by direction: demote (DRAM to PMEM, instead of an "
     "eviction), promote (a DRAM copy made at a read; the persistent copy stays)."},
    {"crescent_tier_move_failures_total", "counter",
     "Tier moves whose copy failed, by direction (a failed demotion evicts its object)."},
    {"crescent_tier_moved_bytes_total", "counter", "Bytes of the objects moved, by direction."},
    {"crescent_tier_dram_copies_dropped_total", "counter",
     "DRAM copies of promoted objects dropped by DRAM's eviction (the object stays, on its "
     "persistent copy)."},
    {"crescent_pmem_verifications_total", "counter",
     "Objects of persistent segments taken over from a restarted node, checked against their "
     "checksums, by result: ok, corrupt (the replica dropped), skipped (its segment went away, "
     "or four checks in a row got no verdict: the replica dropped)."},
    {"crescent_pmem_verifications_pending", "gauge",
     "Objects of taken-over persistent segments still to be checked (not served until their "
     "check passes)."},
    {"crescent_pmem_verification_retries_total", "counter",
     "Checks sent again because the last one got no verdict (no answer in time, the connection "
     "lost, the capability refused)."},
    {"crescent_restore_dropped_objects_total", "counter",
     "Restored objects dropped, by reason: unmounted (their segments were not restored), "
     "new_memory (the node restarted), expired (the node did not return within the restore "
     "grace), conflict (overlapping allocations)."},
};

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

std::string Labelled(std::string_view family, std::string_view key, std::string_view value) {
  std::string out(family);
  out += '{';
  out += key;
  out += "=\"";
  for (char c : value) {  // escape per the exposition format
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += "\"}";
  return out;
}

}  // namespace

std::vector<Sample> CollectMasterSamples(const MasterService& master) {
  const MasterCounters& c = master.counters();
  std::vector<Sample> out;
  const std::pair<std::string_view, const OpCounter*> ops[] = {
      {"mount", &c.mount},
      {"unmount", &c.unmount},
      {"heartbeat", &c.heartbeat},
      {"put_start", &c.put_start},
      {"put_end", &c.put_end},
      {"put_revoke", &c.put_revoke},
      {"get_replica_list", &c.get_replica_list},
      {"exists", &c.exists},
      {"query_prefix", &c.query_prefix},
      {"longest_prefix", &c.longest_prefix},
      {"remove", &c.remove},
      {"end_session", &c.end_session},
      {"touch_keys", &c.touch_keys},
      {"report_corrupt", &c.report_corrupt},
      {"report_unreachable", &c.report_unreachable},
  };
  for (const auto& [op, counter] : ops) {
    out.push_back({Labelled("crescent_requests_total", "op", op), Load(counter->requests)});
    out.push_back({Labelled("crescent_request_failures_total", "op", op), Load(counter->failures)});
    out.push_back({Labelled("crescent_request_items_total", "op", op), Load(counter->items)});
  }
  out.push_back({Labelled("crescent_exact_lookups_total", "result", "hit"), Load(c.exact_hits)});
  out.push_back({Labelled("crescent_exact_lookups_total", "result", "miss"), Load(c.exact_misses)});
  out.push_back({Labelled("crescent_prefix_keys_total", "result", "hit"), Load(c.prefix_hit_keys)});
  out.push_back(
      {Labelled("crescent_prefix_keys_total", "result", "miss"), Load(c.prefix_miss_keys)});
  // Histogram: bucket b holds lengths < 2^b (bucket 0: length 0), cumulative.
  uint64_t cumulative = 0, sum_estimate = 0;
  for (size_t b = 0; b < master::kPrefixBuckets; ++b) {
    uint64_t n = Load(c.prefix_length[b]);
    cumulative += n;
    if (b > 0) sum_estimate += n * (uint64_t{1} << (b - 1));  // lower bound of the bucket
    std::string le = b + 1 < master::kPrefixBuckets ? std::to_string((uint64_t{1} << b) - 1)
                                                    : std::string("+Inf");
    out.push_back({Labelled("crescent_prefix_length_bucket", "le", le), cumulative});
  }
  out.push_back({"crescent_prefix_length_count", cumulative});
  out.push_back({"crescent_prefix_length_sum", sum_estimate});
  out.push_back({"crescent_bloom_negatives_total", Load(c.bloom_negatives)});
  out.push_back({"crescent_bloom_rebuilds_total", Load(c.bloom_rebuilds)});
  out.push_back({"crescent_evictions_total", Load(c.evictions)});
  out.push_back({"crescent_evicted_bytes_total", Load(c.evicted_bytes)});
  out.push_back({"crescent_eviction_rounds_total", Load(c.eviction_rounds)});
  out.push_back({"crescent_expired_puts_total", Load(c.expired_puts)});
  out.push_back({"crescent_dropped_objects_total", Load(c.dropped_objects)});
  out.push_back({"crescent_corrupt_replicas_total", Load(c.corrupt_replicas)});
  out.push_back({"crescent_corrupt_objects_total", Load(c.corrupt_objects)});
  const std::pair<std::string_view, const std::atomic<uint64_t>*> reports[] = {
      {"confirmed", &c.reports_confirmed},
      {"disproved", &c.reports_disproved},
      {"unchecked", &c.reports_unchecked}};
  for (const auto& [result, n] : reports) {
    out.push_back({Labelled("crescent_corruption_reports_total", "result", result), Load(*n)});
  }
  out.push_back({"crescent_corruption_reports_pending", master.PendingCorruptionReports()});

  out.push_back({"crescent_snapshots_total", Load(c.snapshots)});
  out.push_back({"crescent_snapshot_failures_total", Load(c.snapshot_failures)});
  out.push_back({"crescent_last_snapshot_unix_ms", Load(c.last_snapshot_unix_ms)});
  out.push_back({"crescent_last_snapshot_bytes", Load(c.last_snapshot_bytes)});
  out.push_back({"crescent_last_snapshot_objects", Load(c.last_snapshot_objects)});
  out.push_back({"crescent_last_snapshot_duration_us", Load(c.last_snapshot_duration_us)});
  out.push_back({"crescent_last_snapshot_longest_lock_us", Load(c.last_snapshot_longest_lock_us)});
  out.push_back({"crescent_log_bytes_since_snapshot", master.LogBytesSinceSnapshot()});
  out.push_back({"crescent_restore_duration_us", Load(c.restore_duration_us)});
  out.push_back({"crescent_restore_completion_us", Load(c.restore_completion_us)});
  out.push_back({"crescent_restored_objects", Load(c.restored_objects)});
  out.push_back({"crescent_restored_segments", Load(c.restored_segments)});
  out.push_back({"crescent_restored_segments_waiting", master.restored_segments_waiting()});
  out.push_back({"crescent_restore_adopted_segments_total", Load(c.restore_adopted_segments)});
  out.push_back({"crescent_pmem_detached_segments_total", Load(c.pmem_detached_segments)});
  const std::pair<std::string_view, const std::atomic<uint64_t>*> dropped[] = {
      {"unmounted", &c.restore_dropped_unmounted},
      {"new_memory", &c.restore_dropped_new_memory},
      {"expired", &c.restore_dropped_expired},
      {"conflict", &c.restore_dropped_conflict}};
  for (const auto& [reason, n] : dropped) {
    out.push_back({Labelled("crescent_restore_dropped_objects_total", "reason", reason), Load(*n)});
  }
  // Tiers (docs/persistent-tier.md).
  out.push_back({Labelled("crescent_tier_reads_total", "tier", "dram"), Load(c.tier_reads[0])});
  out.push_back({Labelled("crescent_tier_reads_total", "tier", "pmem"), Load(c.tier_reads[1])});
  out.push_back({Labelled("crescent_tier_moves_total", "direction", "demote"), Load(c.demotions)});
  out.push_back({Labelled("crescent_tier_moves_total", "direction", "promote"), Load(c.promotions)});
  out.push_back(
      {Labelled("crescent_tier_move_failures_total", "direction", "demote"),
       Load(c.demotion_failures)});
  out.push_back(
      {Labelled("crescent_tier_move_failures_total", "direction", "promote"),
       Load(c.promotion_failures)});
  out.push_back({"crescent_tier_dram_copies_dropped_total", Load(c.dram_copies_dropped)});
  out.push_back(
      {Labelled("crescent_tier_moved_bytes_total", "direction", "demote"), Load(c.demoted_bytes)});
  out.push_back(
      {Labelled("crescent_tier_moved_bytes_total", "direction", "promote"), Load(c.promoted_bytes)});
  out.push_back({Labelled("crescent_pmem_verifications_total", "result", "ok"), Load(c.verified_ok)});
  out.push_back(
      {Labelled("crescent_pmem_verifications_total", "result", "corrupt"), Load(c.verified_corrupt)});
  out.push_back(
      {Labelled("crescent_pmem_verifications_total", "result", "skipped"), Load(c.verify_skipped)});
  out.push_back({"crescent_pmem_verification_retries_total", Load(c.verify_retries)});
  out.push_back({"crescent_pmem_verifications_pending", master.PendingVerifications()});

  // Tenants (docs/security.md, "Quotas").
  for (const TenantStats& t : master.TenantStatsSnapshot()) {
    out.push_back({Labelled("crescent_tenant_quota_bytes", "tenant", t.tenant), t.quota_bytes});
    out.push_back({Labelled("crescent_tenant_bytes", "tenant", t.tenant), t.bytes});
    out.push_back({Labelled("crescent_tenant_objects", "tenant", t.tenant), t.objects});
    out.push_back({Labelled("crescent_tenant_hits_total", "tenant", t.tenant), t.hits});
    out.push_back({Labelled("crescent_tenant_misses_total", "tenant", t.tenant), t.misses});
    out.push_back({Labelled("crescent_tenant_evictions_total", "tenant", t.tenant), t.evictions});
  }

  MasterStats s = master.Stats();
  out.push_back({"crescent_objects", s.objects});
  out.push_back({"crescent_pending_puts", s.pending_puts});
  out.push_back({"crescent_capacity_bytes", s.capacity_bytes});
  out.push_back({"crescent_used_bytes", s.used_bytes});
  out.push_back({"crescent_held_bytes", s.held_bytes});
  out.push_back({"crescent_metadata_bytes", s.metadata_bytes});
  out.push_back({"crescent_segments", s.segments});
  for (const SegmentInfo& seg : master.ListSegments()) {
    out.push_back(
        {Labelled("crescent_segment_used_bytes", "segment", seg.spec.name), seg.used_bytes});
    out.push_back(
        {Labelled("crescent_segment_capacity_bytes", "segment", seg.spec.name), seg.spec.capacity});
  }
  return out;
}

std::string RenderPrometheus(const MasterService& master) {
  std::vector<Sample> samples = CollectMasterSamples(master);
  std::string out;
  out.reserve(samples.size() * 64);
  for (const Family& f : kFamilies) {
    bool header = false;
    for (const Sample& s : samples) {
      std::string_view n = s.name;
      // A sample belongs to family f when its metric name is f.name, optionally
      // followed by a label set or a histogram suffix.
      if (!n.starts_with(f.name)) continue;
      std::string_view rest = n.substr(f.name.size());
      bool mine = rest.empty() || rest[0] == '{' ||
                  (f.type == "histogram" &&
                   (rest.starts_with("_bucket") || rest == "_sum" || rest == "_count"));
      if (!mine) continue;
      if (!header) {
        out += "# HELP ";
        out += f.name;
        out += ' ';
        out += f.help;
        out += "\n# TYPE ";
        out += f.name;
        out += ' ';
        out += f.type;
        out += '\n';
        header = true;
      }
      out += s.name;
      out += ' ';
      out += std::to_string(s.value);
      out += '\n';
    }
  }
  return out;
}

void CollectMasterGauges(const MasterService& master, metrics::TextWriter& w) {
  const MasterStats s = master.Stats();
  w.Family("crescent_bloom_estimated_fpr", "gauge",
           "Estimated false-positive rate of the negative-lookup Bloom filter now.");
  w.Sample({}, s.bloom_estimated_fpr);
  const std::vector<SegmentInfo> segments = master.ListSegments();
  uint64_t capacity[2] = {0, 0}, used[2] = {0, 0};
  for (const SegmentInfo& seg : segments) {
    const size_t t = seg.spec.tier == Tier::kDram ? 0 : 1;
    capacity[t] += seg.spec.capacity;
    used[t] += seg.used_bytes;
  }
  const std::string_view tiers[2] = {"dram", "pmem"};
  w.Family("crescent_tier_capacity_bytes", "gauge", "Capacity of the mounted segments, by tier.");
  for (size_t t = 0; t < 2; ++t) w.Sample({{"tier", tiers[t]}}, capacity[t]);
  w.Family("crescent_tier_used_bytes", "gauge",
           "Bytes allocated in the mounted segments, by tier.");
  for (size_t t = 0; t < 2; ++t) w.Sample({{"tier", tiers[t]}}, used[t]);
  w.Family("crescent_evictions_by_reason_total", "counter",
           "Objects evicted, by reason: watermark (the background round) or put (a put found "
           "no space).");
  const MasterCounters& c = master.counters();
  w.Sample({{"reason", "watermark"}}, Load(c.evictions_watermark));
  w.Sample({{"reason", "put"}}, Load(c.evictions_for_put));
  const MasterService::PinCounts pins = master.Pins();
  w.Family("crescent_leased_objects", "gauge",
           "Complete objects under a read lease now (removal refused, eviction spares them).");
  w.Sample({}, master.CountLeased());
  w.Family("crescent_pinned_objects", "gauge", "Complete objects pinned, by kind (hard, soft).");
  w.Sample({{"kind", "hard"}}, pins.hard);
  w.Sample({{"kind", "soft"}}, pins.soft);
  const std::vector<SegmentTable::NodeInfo> nodes = master.ListNodes();
  uint64_t suspect = 0;
  for (const auto& n : nodes) suspect += n.suspect ? 1 : 0;
  w.Family("crescent_nodes", "gauge",
           "Store nodes with a mounted segment, by state: alive, or suspect (a client could not "
           "reach it; no new replicas until it proves alive).");
  w.Sample({{"state", "alive"}}, nodes.size() - suspect);
  w.Sample({{"state", "suspect"}}, suspect);
  w.Family("crescent_node_heartbeat_age_seconds", "gauge",
           "Seconds since each store node's last heartbeat (the master drops it past the TTL).");
  for (const auto& n : nodes) {
    w.Sample({{"node", n.node}}, static_cast<double>(n.heartbeat_age_ms) / 1000.0);
  }
  w.Family("crescent_segment_allocations", "gauge",
           "Allocations (object replicas, pending puts, held space), by segment.");
  for (const SegmentInfo& seg : segments) {
    w.Sample({{"segment", seg.spec.name}}, seg.allocations);
  }
}

std::string MasterNotReadyReason(const MasterService& master) {
  if (!master.ListSegments().empty()) return {};
  return "no segment is mounted (no store node has mounted one yet)";
}

metrics::AdminRoutes MasterRoutes(const MasterService& master) {
  metrics::AdminRoutes r;
  r.metrics = [&master] { return RenderPrometheus(master); };
  r.not_ready_reason = [&master] { return MasterNotReadyReason(master); };
  return r;
}

}  // namespace crescent::master
