// master_growth_perf: how the master engine's costs grow with its object count
// (in-process, no gRPC; docs/performance.md, "Growth"). Figures only; it
// asserts nothing.
//
//   master_growth_perf [--objects 1000000,10000000,30000000] [--policy adaptive]
//                      [--samples 200000] [--seconds 2] [--cpu 0|1]
//
// Grows one engine through each checkpoint in turn with single-threaded
// PutStart+PutEnd of 64 KiB objects whose keys have the shape of SGLang page
// keys (36 bytes), timing every pair, so the slowest put of each stretch shows
// any pause at a growth point (an index that rehashes at once). With --cpu 1
// the puts are timed on the thread's CPU clock (a system call per put), which
// leaves out the time the thread waited for a core: on a busy host the steady
// clock counts that wait as a pause. At each checkpoint it prints one row:
//   - resident memory per object beyond its key bytes, and what the engine
//     counts as its own metadata per object;
//   - PutStart+PutEnd over the stretch just grown: p50, p99 and max;
//   - GetReplicaList of random stored keys (--samples calls): p50, p99;
//   - BatchQueryPrefix(128) of stored keys: keys/s on one thread for --seconds;
//   - an eviction round: EvictBytes of 1024 objects' worth, per object evicted,
//     timed after a round of one object that hands the policy the queued reads.
// Snapshot and restore times at each size come from durability_perf
// (--objects N --policy NAME), run separately.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "master/master_service.h"
#include "perf_master.h"
#include "perf_util.h"

using namespace crescent;
using namespace crescent::master;
using namespace crescent::perf;

namespace {

// Latencies at 10 ns resolution below 1 ms, exactly above; quantiles read
// from the counts. Small enough to keep no sample list for millions of calls.
class Latencies {
 public:
  void Record(uint64_t ns) {
    ++count_;
    max_ = std::max(max_, ns);
    if (ns < kFineNs) {
      ++fine_[ns / kStepNs];
    } else {
      slow_.push_back(ns);
    }
  }
  uint64_t max() const { return max_; }
  size_t over(uint64_t ns) const {
    size_t n = 0;
    for (uint64_t v : slow_) n += v > ns;
    return n;
  }
  double Quantile(double q) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(q * double(count_ - 1));
    uint64_t seen = 0;
    for (size_t i = 0; i < fine_.size(); ++i) {
      seen += fine_[i];
      if (seen > rank) return double(i * kStepNs);
    }
    std::vector<uint64_t> slow = slow_;
    std::sort(slow.begin(), slow.end());
    return double(slow[std::min<size_t>(rank - seen, slow.size() - 1)]);
  }

 private:
  static constexpr uint64_t kStepNs = 10;
  static constexpr uint64_t kFineNs = 1'000'000;
  std::vector<uint32_t> fine_ = std::vector<uint32_t>(kFineNs / kStepNs);
  std::vector<uint64_t> slow_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

uint64_t NsSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

std::vector<uint64_t> ParseCounts(const char* text) {
  std::vector<uint64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::strtoull(item.c_str(), nullptr, 10));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> checkpoints = {1'000'000, 10'000'000, 30'000'000};
  std::string policy = "adaptive";
  uint64_t samples = 200'000;
  double seconds = 2;
  bool cpu = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--objects")) {
      checkpoints = ParseCounts(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--policy")) {
      policy = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--samples")) {
      samples = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--seconds")) {
      seconds = std::atof(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--cpu")) {
      cpu = std::strcmp(argv[i + 1], "0") != 0;
    } else {
      std::fprintf(stderr,
                   "usage: master_growth_perf [--objects N1,N2,...] [--policy NAME] "
                   "[--samples N] [--seconds S] [--cpu 0|1]\n");
      return 2;
    }
  }
  std::sort(checkpoints.begin(), checkpoints.end());
  if (checkpoints.empty() || checkpoints.front() == 0) {
    std::fprintf(stderr, "--objects needs positive counts\n");
    return 2;
  }
  const uint64_t most = checkpoints.back();
  constexpr uint64_t kObject = 64 * 1024;
  // Room for twice the objects: nothing is evicted but the rounds asked for.
  std::unique_ptr<MasterService> created = MakePerfMaster(policy, most, kObject);
  if (!created) return 2;
  MasterService& m = *created;
  std::printf(
      "master_growth_perf: policy %s, 64 KiB objects, 36-byte keys, one thread; puts timed "
      "on the %s clock\n",
      policy.c_str(), cpu ? "thread's CPU" : "steady");
  std::printf("%10s %9s %9s | %8s %8s %10s | %8s %8s | %12s | %10s\n", "objects", "B/obj", "engine",
              "put p50", "put p99", "put max", "get p50", "get p99", "prefix keys/s", "evict/obj");
  const uint64_t rss0 = RssBytes();
  uint64_t next = 0;  // the next key number to put
  uint64_t failures = 0;
  std::mt19937_64 rng(1);
  for (uint64_t target : checkpoints) {
    Latencies put;
    for (; next < target; ++next) {
      const std::string key = KeyOf(next);
      const auto start = std::chrono::steady_clock::now();
      const uint64_t cpu_start = cpu ? ThreadCpuNs() : 0;
      auto granted = m.PutStart(key, kObject, {});
      const bool ok = granted.ok() && m.PutEnd(key, granted->token).ok();
      put.Record(cpu ? ThreadCpuNs() - cpu_start : NsSince(start));
      failures += !ok;
    }
    const MasterStats stats = m.Stats();
    const double per_object =
        (double(RssBytes() - rss0) - 36.0 * double(stats.objects)) / double(stats.objects);
    Latencies get;
    for (uint64_t i = 0; i < samples; ++i) {
      const std::string key = KeyOf(rng() % next);
      const auto start = std::chrono::steady_clock::now();
      (void)m.GetReplicaList(key);
      get.Record(NsSince(start));
    }
    std::vector<std::string> batch(128);
    uint64_t keys = 0;
    const double p0 = Now();
    while (Now() - p0 < seconds) {
      const uint64_t base = rng() % next;
      for (size_t i = 0; i < batch.size(); ++i) batch[i] = KeyOf((base + i) % next);
      (void)m.BatchQueryPrefix(batch);
      keys += batch.size();
    }
    const double prefix_rate = double(keys) / (Now() - p0);
    // An eviction first hands the policy the reads queued since the last one
    // (the GetReplicaList samples' deferred touches): a round of one object
    // takes that, and the round of 1024 is timed on its own.
    const auto f0 = std::chrono::steady_clock::now();
    (void)m.EvictBytes(kObject);
    const uint64_t flush_ns = NsSince(f0);
    const uint64_t before = m.Stats().objects;
    const auto e0 = std::chrono::steady_clock::now();
    (void)m.EvictBytes(1024 * kObject);
    const uint64_t evict_ns = NsSince(e0);
    const uint64_t evicted = before - std::min(before, m.Stats().objects);
    std::printf("%10" PRIu64
                " %9.1f %9.1f | %7.2fu %7.2fu %9.2fms | %7.2fu %7.2fu | %12.0f | %8.2fus\n",
                stats.objects, per_object, double(stats.metadata_bytes) / double(stats.objects),
                put.Quantile(0.5) / 1e3, put.Quantile(0.99) / 1e3, double(put.max()) / 1e6,
                get.Quantile(0.5) / 1e3, get.Quantile(0.99) / 1e3, prefix_rate,
                evicted ? double(evict_ns) / double(evicted) / 1e3 : 0.0);
    std::printf("%10s puts over 10 ms: %zu, over 50 ms: %zu; evicted %" PRIu64
                "; the first round (one object, with the queued reads) %.2f ms\n",
                "", put.over(10'000'000), put.over(50'000'000), evicted, double(flush_ns) / 1e6);
    std::fflush(stdout);
  }
  if (failures) std::printf("failed puts: %" PRIu64 "\n", failures);
  return failures == 0 ? 0 : 1;
}
