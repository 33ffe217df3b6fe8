#include "server/status_report.h"

#include <nlohmann/json.hpp>

namespace crescent::server {
namespace {

using nlohmann::json;

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

double Ratio(uint64_t num, uint64_t den) {
  return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
}

}  // namespace

StatusReport::Point StatusReport::Take(int64_t unix_ms) const {
  const master::MasterCounters& c = master_.counters();
  Point p;
  p.unix_ms = unix_ms;
  for (size_t m = 0; m < rpc::kRpcMethodCount; ++m) {
    const auto method = static_cast<rpc::RpcMethod>(m);
    p.rpcs += rpc_.Latency(method).count;
    for (int code = 1; code <= static_cast<int>(kLastErrorCode); ++code) {
      p.rpc_errors += rpc_.Errors(method, static_cast<ErrorCode>(code));
    }
  }
  p.hits = Load(c.exact_hits) + Load(c.prefix_hit_keys);
  p.lookups = p.hits + Load(c.exact_misses) + Load(c.prefix_miss_keys);
  master::MasterStats s = master_.Stats();
  p.used_bytes = s.used_bytes;
  p.objects = s.objects;
  return p;
}

void StatusReport::Sample(int64_t unix_ms) {
  Point p = Take(unix_ms);
  std::lock_guard lock(mu_);
  history_.push_back(p);
  while (history_.size() > kHistoryPoints) history_.pop_front();
}

std::string StatusReport::Json(int64_t unix_ms) const {
  const master::MasterCounters& c = master_.counters();
  const master::MasterStats s = master_.Stats();
  json out;
  out["time_unix_ms"] = unix_ms;
  out["master"] = {{"address", address_}, {"eviction_policy", master_.config().eviction_policy}};
  const uint64_t exact_hits = Load(c.exact_hits), exact_misses = Load(c.exact_misses);
  const uint64_t prefix_hits = Load(c.prefix_hit_keys), prefix_misses = Load(c.prefix_miss_keys);
  out["summary"] = {
      {"objects", s.objects},
      {"pending_puts", s.pending_puts},
      {"capacity_bytes", s.capacity_bytes},
      {"used_bytes", s.used_bytes},
      {"held_bytes", s.held_bytes},
      {"metadata_bytes", s.metadata_bytes},
      {"segments", s.segments},
      {"bloom_estimated_fpr", s.bloom_estimated_fpr},
      {"evictions", Load(c.evictions)},
      {"exact_hits", exact_hits},
      {"exact_misses", exact_misses},
      {"prefix_hit_keys", prefix_hits},
      {"prefix_miss_keys", prefix_misses},
      // Every key looked up (exact or in a prefix query) that was found.
      {"hit_ratio",
       Ratio(exact_hits + prefix_hits, exact_hits + exact_misses + prefix_hits + prefix_misses)},
  };
  json segments = json::array();
  for (const master::SegmentInfo& seg : master_.ListSegments()) {
    segments.push_back({{"name", seg.spec.name},
                        {"node", seg.spec.owner_node},
                        {"endpoint", seg.spec.endpoint},
                        {"tier", seg.spec.tier == master::Tier::kDram ? "dram" : "pmem"},
                        {"capacity_bytes", seg.spec.capacity},
                        {"used_bytes", seg.used_bytes}});
  }
  out["segments"] = std::move(segments);
  json tenants = json::array();
  for (const master::TenantStats& t : master_.TenantStatsSnapshot()) {
    tenants.push_back({{"tenant", t.tenant},
                       {"quota_bytes", t.quota_bytes},
                       {"bytes", t.bytes},
                       {"objects", t.objects},
                       {"hits", t.hits},
                       {"misses", t.misses},
                       {"evictions", t.evictions}});
  }
  out["tenants"] = std::move(tenants);
  if (cluster_) {
    const ClusterView v = cluster_();
    json masters = json::array();
    for (const ClusterMemberView& m : v.members) {
      masters.push_back({{"master_id", m.info.master_id},
                         {"grpc", m.info.grpc},
                         {"leader", m.leader},
                         {"applied_records", m.info.applied_records},
                         {"lag_records", m.lag_records},
                         {"lag_seconds", m.lag_seconds}});
    }
    out["cluster"] = {{"name", v.cluster},           {"etcd", v.etcd},
                      {"self_id", v.self_id},        {"leader_id", v.leader_id},
                      {"leader_changes", v.leader_changes}, {"masters", std::move(masters)}};
  }
  json methods = json::array();
  json errors = json::array();
  for (size_t m = 0; m < rpc::kRpcMethodCount; ++m) {
    const auto method = static_cast<rpc::RpcMethod>(m);
    const metrics::HistogramSnapshot h = rpc_.Latency(method);
    uint64_t failed = 0;
    for (int code = 1; code <= static_cast<int>(kLastErrorCode); ++code) {
      const uint64_t n = rpc_.Errors(method, static_cast<ErrorCode>(code));
      if (n == 0) continue;
      failed += n;
      errors.push_back({{"method", rpc::RpcMethodName(method)},
                        {"code", ErrorCodeName(static_cast<ErrorCode>(code))},
                        {"count", n}});
    }
    if (h.count == 0 && failed == 0) continue;
    methods.push_back({{"method", rpc::RpcMethodName(method)},
                       {"count", h.count},
                       {"errors", failed},
                       {"mean_us", h.count ? static_cast<double>(h.sum) / h.count / 1e3 : 0.0},
                       {"p50_us", h.Quantile(0.5) / 1e3},
                       {"p99_us", h.Quantile(0.99) / 1e3}});
  }
  out["rpc"] = std::move(methods);
  out["errors"] = std::move(errors);
  json history = json::array();
  {
    std::lock_guard lock(mu_);
    for (const Point& p : history_) {
      history.push_back(
          {p.unix_ms, p.rpcs, p.rpc_errors, p.hits, p.lookups, p.used_bytes, p.objects});
    }
  }
  out["history_fields"] = {"unix_ms", "rpcs",       "rpc_errors", "hits",
                           "lookups", "used_bytes", "objects"};
  out["history"] = std::move(history);
  // Names are bytes; a segment or node name that is not UTF-8 must not throw.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace crescent::server
