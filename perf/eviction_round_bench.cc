// The master's watermark eviction round, per policy: what one RunMaintenance()
// pass costs when the cache has reached its high watermark, with the policy's
// learning included (the round first replays the reads since the last round
// into the policy: that is where the learned and adaptive policies learn).
//
// A MasterService (injected clock, one segment of kObjects 4 KiB pages,
// watermark 0.95, evict ratio 0.05) is filled with chained puts (chains of 32
// pages, as a request's pages). Before each timed round, untimed: new chains
// are put until the segment is full again, a random tenth of the pages are
// read (touches) and the clock moves past every lease and capability. The
// timed part is the round itself: flushing the touches into the policy,
// choosing about kObjects / 20 victims and removing them.
//
//   Round/<policy>: time per round; items = pages evicted per round.
//   VersusLru/<policy>: the same round with <policy> and with lru, on two
//     clusters fed alike, back to back in each iteration, so that both see the
//     same load on a shared machine; reports the median and the quartiles of
//     the per-iteration ratio (policy / lru), and the policy's time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "master/master_service.h"

namespace crescent::master {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kObjects = 200'000;
constexpr size_t kChain = 32;

class Cluster {
 public:
  explicit Cluster(const std::string& policy) {
    MasterConfig config;
    config.eviction_policy = policy;
    config.high_watermark = 0.95;
    config.evict_ratio = 0.05;
    config.lease_ms = 1;
    config.lease_bytes_per_ms = 0;
    config.capability_grace_ms = 0;
    config.put_timeout_ms = 10;
    config.allocation_alignment = kPage;
    config.bloom_expected_keys = 2 * kObjects;
    master_ = std::move(MasterService::Create(config, clock_).value());
    master_->MountSegment({"bench", kObjects * kPage, "bench-node", "local", Tier::kDram}).value();
  }

  // Puts chains until the next chain would not fit (or a put fails: space
  // still held for a capability that has not expired yet, say).
  void Fill() {
    while (master_->Stats().used_bytes + kChain * kPage <= kObjects * kPage && PutChain()) {
    }
  }

  // Reads kObjects / 10 pages at random among the last kObjects put (most of
  // them still stored; a miss is a read of an evicted page, as in a cache).
  void ReadSome() {
    for (uint64_t i = 0; i < kObjects / 10; ++i) {
      const uint64_t n = next_ - 1 - rng_() % std::min(next_, kObjects);
      (void)master_->GetReplicaList(KeyOf(n));
    }
  }

  void PassTime() { clock_.Advance(100); }
  void Round() { master_->RunMaintenance(); }
  uint64_t Objects() const { return master_->Stats().objects; }

 private:
  static std::string KeyOf(uint64_t n) { return "page-" + std::to_string(n); }

  bool PutChain() {
    std::vector<std::string> keys;
    for (size_t i = 0; i < kChain; ++i) keys.push_back(KeyOf(next_++));
    const std::vector<uint64_t> sizes(keys.size(), kPage);
    std::vector<uint64_t> tokens;
    bool ok = true;
    for (auto& grant : master_->BatchPutStart(keys, sizes, PutConfig{}, /*chain=*/true)) {
      ok = ok && grant.ok();
      tokens.push_back(grant.ok() ? grant->token : 0);
    }
    for (const Status& s : master_->BatchPutEnd(keys, tokens)) ok = ok && s.ok();
    return ok;
  }

  ManualClock clock_;
  std::unique_ptr<MasterService> master_;
  std::mt19937_64 rng_{42};
  uint64_t next_ = 0;
};

void BM_Round(benchmark::State& state, const std::string& policy) {
  Cluster cluster(policy);
  cluster.Fill();
  for (int warm = 0; warm < 20; ++warm) {  // the learned model's first epochs
    cluster.ReadSome();
    cluster.PassTime();
    cluster.Round();
    cluster.Fill();
  }
  uint64_t evicted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    cluster.Fill();
    cluster.ReadSome();
    cluster.PassTime();
    const uint64_t before = cluster.Objects();
    state.ResumeTiming();
    cluster.Round();
    state.PauseTiming();
    evicted += before - cluster.Objects();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(evicted));
  state.counters["evicted_per_round"] =
      benchmark::Counter(static_cast<double>(evicted) / static_cast<double>(state.iterations()));
}

double Seconds(Cluster& cluster) {
  const auto start = std::chrono::steady_clock::now();
  cluster.Round();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Prepare(Cluster& cluster) {
  cluster.Fill();
  cluster.ReadSome();
  cluster.PassTime();
}

void BM_VersusLru(benchmark::State& state, const std::string& policy) {
  Cluster base("lru");
  Cluster other(policy);
  for (Cluster* c : {&base, &other}) {
    c->Fill();
    for (int warm = 0; warm < 20; ++warm) {
      Prepare(*c);
      c->Round();
    }
  }
  std::vector<double> ratios;
  for (auto _ : state) {
    Prepare(base);
    Prepare(other);
    // Alternate which goes first, so neither always runs on a cache the
    // other has just cooled.
    double lru_s, other_s;
    if (ratios.size() % 2 == 0) {
      lru_s = Seconds(base);
      other_s = Seconds(other);
    } else {
      other_s = Seconds(other);
      lru_s = Seconds(base);
    }
    state.SetIterationTime(other_s);
    ratios.push_back(other_s / lru_s);
  }
  std::sort(ratios.begin(), ratios.end());
  auto quantile = [&](double q) { return ratios[static_cast<size_t>(q * (ratios.size() - 1))]; };
  state.counters["ratio_p25"] = quantile(0.25);
  state.counters["ratio_median"] = quantile(0.5);
  state.counters["ratio_p75"] = quantile(0.75);
}

const bool registered = [] {
  for (const char* policy : {"lru", "s3fifo", "prefix-lru", "learned", "adaptive"}) {
    benchmark::RegisterBenchmark((std::string("Round/") + policy).c_str(), BM_Round,
                                 std::string(policy))
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* policy : {"learned", "adaptive"}) {
    benchmark::RegisterBenchmark((std::string("VersusLru/") + policy).c_str(), BM_VersusLru,
                                 std::string(policy))
        ->UseManualTime()
        ->Iterations(60)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace crescent::master
