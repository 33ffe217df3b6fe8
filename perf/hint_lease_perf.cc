// hint_lease_perf: what read leases and watermark eviction cost session
// hints, without a cluster and without timing noise.
//
// Replays a trace through a MasterService (one object per block, one 4 KiB
// segment of exactly N blocks, as `crescent sim --engine master`), the way
// `crescent replay` drives a live master with one stream: per request
// BatchQueryPrefix, a read (GetReplicaList, which leases) of every stored
// block, then the missing blocks put with their chain parents, then, for a
// hinted last turn (sim::SessionHints, as `--session-hints F --seed S` draw
// them), EndSession on its keys, leaf first. The injected clock moves
// --ms-per-request after each request, so a read lease of --lease-ms plus
// --grace-ms spans that many later requests, as it does live at that request
// rate, and the maintenance pass (watermark eviction) runs every 50 ms of it,
// as `crescent serve`'s background thread does. The defaults are `crescent
// serve`'s (lease 500 ms, grace 50 ms, watermark 0.95, evict ratio 0.05);
// `--lease-ms 50 --grace-ms 0 --high-watermark 1.0 --evict-ratio 0.001` are
// the flags docs/replay.md gives serve to compare with the simulator.
// --batch-puts puts each run of missing pages as one chained batch, as
// `crescent replay`'s BatchPutFrom does; --unlinked-runs makes each run a
// chain of its own: its first page without a parent, its last ending a write
// (PutMissing below).
//
//   hint_lease_perf TRACE [--capacity-pages N] [--policy P] [--session-hints F]
//                   [--seed S] [--lease-ms L] [--grace-ms G] [--ms-per-request D]
//                   [--high-watermark F] [--evict-ratio F] [--batch-puts] [--unlinked-runs]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/clock.h"
#include "master/master_service.h"
#include "sim/page_key.h"
#include "sim/session_hints.h"
#include "sim/trace_reader.h"

using namespace crescent;

namespace {

struct Flags {
  std::string trace;
  uint64_t pages = 2196;
  std::string policy = "adaptive";
  double hints = 0.5;
  uint64_t seed = 1;
  int64_t lease_ms = 500;
  int64_t grace_ms = 50;
  double ms_per_request = 4.5;
  double high_watermark = 0.95;
  double evict_ratio = 0.05;
  bool unlinked_runs = false;
  bool batch_puts = false;
};

bool Parse(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* name) -> const char* {
      if (std::strcmp(argv[i], name) != 0 || i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (const char* v = value("--capacity-pages")) {
      f->pages = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--policy")) {
      f->policy = v;
    } else if (const char* v = value("--session-hints")) {
      f->hints = std::atof(v);
    } else if (const char* v = value("--seed")) {
      f->seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--lease-ms")) {
      f->lease_ms = std::atoll(v);
    } else if (const char* v = value("--grace-ms")) {
      f->grace_ms = std::atoll(v);
    } else if (const char* v = value("--ms-per-request")) {
      f->ms_per_request = std::atof(v);
    } else if (const char* v = value("--high-watermark")) {
      f->high_watermark = std::atof(v);
    } else if (const char* v = value("--evict-ratio")) {
      f->evict_ratio = std::atof(v);
    } else if (std::strcmp(argv[i], "--unlinked-runs") == 0) {
      f->unlinked_runs = true;
    } else if (std::strcmp(argv[i], "--batch-puts") == 0) {
      f->batch_puts = true;
    } else if (argv[i][0] != '-' && f->trace.empty()) {
      f->trace = argv[i];
    } else {
      return false;
    }
  }
  return !f->trace.empty();
}

constexpr uint64_t kPage = 4096;

// Puts the keys not `stored`; returns how many failed. Each page's parent is
// the page before it, but with `unlinked` the first page of each run of
// missing pages has none, and ends a write with the run's last. Page by page
// (as `crescent sim --engine master`), or with `batch` each run as one chained
// BatchPutStart and BatchPutEnd, as `crescent replay`'s BatchPutFrom does.
uint64_t PutMissing(master::MasterService& m, const std::vector<std::string>& keys,
                    const std::vector<bool>& stored, bool batch, bool unlinked) {
  uint64_t failed = 0;
  for (size_t i = 0; i < keys.size();) {
    if (stored[i]) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < keys.size() && !stored[end]) ++end;
    const size_t j = batch ? end : i + 1;
    const std::span<const std::string> run(keys.data() + i, j - i);
    master::PutConfig put;
    if (i > 0 && !(unlinked && stored[i - 1])) put.parent_key = keys[i - 1];
    put.ends_write = j == keys.size() || (unlinked && j == end);
    const std::vector<uint64_t> sizes(run.size(), kPage);
    std::vector<uint64_t> tokens;
    for (auto& grant : m.BatchPutStart(run, sizes, put, /*chain=*/batch)) {
      tokens.push_back(grant.ok() ? grant->token : 0);
      failed += grant.ok() ? 0 : 1;
    }
    for (const Status& s : m.BatchPutEnd(run, tokens)) failed += s.ok() ? 0 : 1;
    i = j;
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!Parse(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: hint_lease_perf TRACE [--capacity-pages N] [--policy P] "
                 "[--session-hints F] [--seed S] [--lease-ms L] [--grace-ms G] "
                 "[--ms-per-request D] [--high-watermark F] [--evict-ratio F] "
                 "[--batch-puts] [--unlinked-runs]\n");
    return 1;
  }
  auto trace = sim::LoadTrace(f.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "%s\n", trace.status().ToString().c_str());
    return 1;
  }
  master::MasterConfig config;
  config.eviction_policy = f.policy;
  config.high_watermark = f.high_watermark;
  config.evict_ratio = f.evict_ratio;
  config.heartbeat_ttl_ms = int64_t{1} << 40;  // nothing heartbeats here
  config.lease_ms = f.lease_ms;
  config.capability_grace_ms = f.grace_ms;
  config.allocation_alignment = kPage;
  config.bloom_expected_keys = trace->distinct_blocks() + 1;
  ManualClock clock;
  auto created = master::MasterService::Create(config, clock);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  master::MasterService& m = **created;
  if (!m.MountSegment({"replay", f.pages * kPage, "replay-node", "local", master::Tier::kDram})
           .ok()) {
    return 1;
  }
  std::vector<std::string> names(trace->distinct_blocks());
  for (size_t b = 0; b < names.size(); ++b) {
    names[b] = sim::PageKey(sim::kDefaultKeyPrefix, trace->block_keys[b]);
  }
  const std::vector<bool> hinted = sim::SessionHints(*trace, f.hints, f.seed);
  uint64_t refs = 0, hits = 0, put_failed = 0, marked = 0;
  double elapsed = 0;
  std::vector<std::string> keys;
  for (size_t r = 0; r < trace->requests.size(); ++r) {
    keys.clear();
    for (sim::BlockId b : trace->BlocksOf(trace->requests[r])) keys.push_back(names[b]);
    auto prefix = m.BatchQueryPrefix(keys);
    if (!prefix.ok()) return 1;
    refs += keys.size();
    hits += *prefix;
    std::vector<bool> stored(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) stored[i] = m.GetReplicaList(keys[i]).ok();
    put_failed += PutMissing(m, keys, stored, f.batch_puts, f.unlinked_runs);
    if (hinted[r]) {
      std::vector<std::string> leaf_first(keys.rbegin(), keys.rend());
      if (auto n = m.EndSession(leaf_first); n.ok()) marked += *n;
    }
    const double before = elapsed;
    elapsed += f.ms_per_request;
    clock.Advance(static_cast<TimeMs>(elapsed) - static_cast<TimeMs>(before));
    // The maintenance thread's pass every 50 ms (watermark eviction).
    if (static_cast<int64_t>(elapsed) / 50 != static_cast<int64_t>(before) / 50) {
      m.RunMaintenance();
    }
  }
  std::printf(
      "policy %s pages %llu hints %g lease %lld ms grace %lld ms step %.2f ms: "
      "hit ratio %.4f (put failures %llu, pages marked %llu)\n",
      f.policy.c_str(), static_cast<unsigned long long>(f.pages), f.hints,
      static_cast<long long>(f.lease_ms), static_cast<long long>(f.grace_ms), f.ms_per_request,
      refs == 0 ? 0.0 : static_cast<double>(hits) / refs,
      static_cast<unsigned long long>(put_failed), static_cast<unsigned long long>(marked));
  return 0;
}
