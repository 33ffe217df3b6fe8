// master_perf: in-process throughput and memory of the master engine.
//
//   master_perf [--objects N] [--threads T] [--seconds S] [--histogram-rounds R]
//
// Fills the engine with N objects (PutStart+PutEnd) from T threads, then runs
// GetReplicaList and BatchQueryPrefix(128 keys) at 0% and 90% miss for S seconds
// each, and prints ops/s plus resident memory per object. Figures only; it
// asserts nothing.
//
// With --histogram-rounds R it then measures what the per-call latency
// histograms cost (metrics/histogram.h): R rounds, each running GetReplicaList
// and BatchQueryPrefix(128) for S seconds plain and S seconds with every call
// timed into a histogram the way the gRPC server times each RPC, alternating
// so that drift on a shared machine hits both alike; it prints the ratio of
// the summed rates (timed / plain).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "master/master_service.h"
#include "metrics/histogram.h"
#include "perf_master.h"
#include "perf_util.h"

using namespace crescent;
using namespace crescent::master;

namespace {

using crescent::perf::KeyOf;
using crescent::perf::Now;
using crescent::perf::RssBytes;

template <typename Fn>
double RunFor(int threads, double seconds, Fn fn) {  // returns ops/s
  std::atomic<uint64_t> ops{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  double t0 = Now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t + 1);
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 64; ++i) n += fn(rng);
      }
      ops.fetch_add(n);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : ts) th.join();
  return ops.load() / (Now() - t0);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t objects = 1'000'000;
  int threads = 2;
  double seconds = 2;
  int histogram_rounds = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--objects"))
      objects = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--histogram-rounds"))
      histogram_rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: master_perf [--objects N] [--threads T] [--seconds S] "
                   "[--histogram-rounds R]\n");
      return 2;
    }
  }
  const uint64_t kObject = 64 * 1024;
  std::unique_ptr<MasterService> created = crescent::perf::MakePerfMaster("lru", objects, kObject);
  if (!created) return 2;
  MasterService& m = *created;
  std::vector<std::string> keys(objects);
  for (uint64_t i = 0; i < objects; ++i) keys[i] = KeyOf(i);
  uint64_t key_bytes = 0;
  for (auto& k : keys) key_bytes += k.size();

  uint64_t rss0 = RssBytes();
  std::vector<std::thread> ts;
  std::atomic<uint64_t> failures{0};
  double t0 = Now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (uint64_t i = t; i < objects; i += threads) {
        auto start = m.PutStart(keys[i], kObject, {});
        if (!start.ok() || !m.PutEnd(keys[i], start->token).ok()) failures++;
      }
    });
  }
  for (auto& th : ts) th.join();
  double put_rate = objects / (Now() - t0);
  uint64_t rss1 = RssBytes();
  MasterStats st = m.Stats();

  double get_rate = RunFor(threads, seconds, [&](std::mt19937_64& rng) {
    return m.GetReplicaList(keys[rng() % objects]).ok() ? 1 : 0;
  });
  std::vector<std::string> absent(1 << 16);
  for (size_t i = 0; i < absent.size(); ++i) absent[i] = "absent/" + KeyOf(i);
  auto prefix_rate = [&](double miss) {
    return RunFor(threads, seconds, [&, miss](std::mt19937_64& rng) {
      thread_local std::vector<std::string> batch(128);
      size_t present = static_cast<size_t>(128 * (1 - miss));
      uint64_t base = rng() % objects;
      for (size_t i = 0; i < 128; ++i) {
        batch[i] = i < present ? keys[(base + i) % objects] : absent[(base + i) & 0xffff];
      }
      (void)m.BatchQueryPrefix(batch);
      return 1;
    });
  };
  double prefix0 = prefix_rate(0.0);
  double prefix90 = prefix_rate(0.9);

  std::printf("master_perf: %" PRIu64 " objects, %d threads, key %.1f bytes avg, policy lru\n",
              objects, threads, double(key_bytes) / objects);
  std::printf("  %-34s %12.0f ops/s   (failures %" PRIu64 ")\n", "PutStart+PutEnd", put_rate,
              failures.load());
  std::printf("  %-34s %12.0f ops/s\n", "GetReplicaList", get_rate);
  std::printf("  %-34s %12.0f calls/s  %12.0f keys/s\n", "BatchQueryPrefix(128), 0% miss", prefix0,
              prefix0 * 128);
  std::printf("  %-34s %12.0f calls/s  %12.0f keys/s\n", "BatchQueryPrefix(128), 90% miss",
              prefix90, prefix90 * 128);
  std::printf("  RSS growth per object: %.1f bytes (%.1f beyond key bytes)\n",
              double(rss1 - rss0) / objects, double(rss1 - rss0 - key_bytes) / objects);
  std::printf(
      "  engine-counted metadata per object: %.1f bytes (index, slab, key index, keys, bloom)\n",
      double(st.metadata_bytes) / objects);
  if (histogram_rounds > 0) {
    // What Call::Proceed adds per RPC: two clock reads and one Record.
    metrics::Histogram get_h(metrics::LatencyBoundsNs()), prefix_h(metrics::LatencyBoundsNs());
    auto timed = [](metrics::Histogram& h, auto&& call) {
      const auto start = std::chrono::steady_clock::now();
      call();
      h.Record(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - start)
                                         .count()));
    };
    auto get_once = [&](std::mt19937_64& rng) {
      return m.GetReplicaList(keys[rng() % objects]).ok() ? 1 : 0;
    };
    auto prefix_once = [&](std::mt19937_64& rng) {
      thread_local std::vector<std::string> batch(128);
      uint64_t base = rng() % objects;
      for (size_t i = 0; i < 128; ++i) batch[i] = keys[(base + i) % objects];
      (void)m.BatchQueryPrefix(batch);
      return 1;
    };
    double get_plain = 0, get_timed = 0, prefix_plain = 0, prefix_timed = 0;
    for (int r = 0; r < histogram_rounds; ++r) {
      get_plain += RunFor(threads, seconds, get_once);
      get_timed += RunFor(threads, seconds, [&](std::mt19937_64& rng) {
        int n = 0;
        timed(get_h, [&] { n = get_once(rng); });
        return n;
      });
      prefix_plain += RunFor(threads, seconds, prefix_once);
      prefix_timed += RunFor(threads, seconds, [&](std::mt19937_64& rng) {
        timed(prefix_h, [&] { prefix_once(rng); });
        return 1;
      });
    }
    // The recording alone, on one thread: two clock reads and a Record.
    metrics::Histogram alone(metrics::LatencyBoundsNs());
    constexpr int kAlone = 2'000'000;
    const double a0 = Now();
    for (int i = 0; i < kAlone; ++i) timed(alone, [] {});
    const double record_ns = (Now() - a0) / kAlone * 1e9;
    std::printf("  latency histograms, %d rounds of %.1f s each way (timed / plain):\n",
                histogram_rounds, seconds);
    std::printf("  %-34s %12.1f ns per call (two clock reads and one Record, one thread)\n",
                "cost of timing one call", record_ns);
    std::printf("  %-34s %12.0f vs %12.0f ops/s   ratio %.4f  (p50 %.0f ns)\n", "GetReplicaList",
                get_timed / histogram_rounds, get_plain / histogram_rounds, get_timed / get_plain,
                get_h.Snapshot().Quantile(0.5));
    std::printf("  %-34s %12.0f vs %12.0f calls/s ratio %.4f  (p50 %.0f ns)\n",
                "BatchQueryPrefix(128), 0% miss", prefix_timed / histogram_rounds,
                prefix_plain / histogram_rounds, prefix_timed / prefix_plain,
                prefix_h.Snapshot().Quantile(0.5));
  }
  return failures.load() == 0 ? 0 : 1;
}
