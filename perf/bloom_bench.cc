// CountingBloomFilter at its design load: 1M keys, p = 1%. Keys, built before
// timing, are 64-hex-char page hashes (short_keys:0) or "key-123" strings
// (short_keys:1). The *Hash variants take a precomputed XXH3, as the master does.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cache/counting_bloom_filter.h"

namespace crescent::cache {
namespace {

constexpr int kDesignKeys = 1'000'000;
constexpr double kFpr = 0.01;

std::vector<std::string> MakeKeys(int kind, const char* tag) {
  std::vector<std::string> keys;
  keys.reserve(kDesignKeys);
  for (uint64_t i = 0; i < kDesignKeys; ++i) {
    if (kind == 0) {
      // Deterministic stand-in for a chained page hash: 4 x 16 hex digits.
      char buf[65];
      const uint64_t seed = HashKey(std::string(tag) + std::to_string(i));
      std::snprintf(buf, sizeof(buf), "%016llx%016llx%016llx%016llx",
                    static_cast<unsigned long long>(seed),
                    static_cast<unsigned long long>(seed * 0x9E3779B97F4A7C15ULL),
                    static_cast<unsigned long long>(seed ^ 0xC2B2AE3D27D4EB4FULL),
                    static_cast<unsigned long long>(~seed));
      keys.emplace_back(buf, 64);
    } else {
      keys.push_back(std::string(tag) + "-" + std::to_string(i));
    }
  }
  return keys;
}

const std::vector<std::string>& Present(int kind) {
  static const std::vector<std::string> keys[2] = {MakeKeys(0, "key"), MakeKeys(1, "key")};
  return keys[kind];
}
const std::vector<std::string>& Absent(int kind) {
  static const std::vector<std::string> keys[2] = {MakeKeys(0, "absent"), MakeKeys(1, "absent")};
  return keys[kind];
}

std::vector<uint64_t> Hashes(const std::vector<std::string>& keys) {
  std::vector<uint64_t> hashes;
  hashes.reserve(keys.size());
  for (const auto& k : keys) hashes.push_back(HashKey(k));
  return hashes;
}

// The filter loaded with every present key, built once per key kind.
const CountingBloomFilter& Loaded(int kind) {
  static std::unique_ptr<CountingBloomFilter> filters[2];
  if (!filters[kind]) {
    filters[kind] = std::make_unique<CountingBloomFilter>(kDesignKeys, kFpr);
    for (const auto& k : Present(kind)) filters[kind]->Add(k);
  }
  return *filters[kind];
}

void BM_Add(benchmark::State& state) {
  const auto& keys = Present(static_cast<int>(state.range(0)));
  auto f = std::make_unique<CountingBloomFilter>(kDesignKeys, kFpr);
  size_t i = 0;
  for (auto _ : state) {
    f->Add(keys[i]);
    if (++i == keys.size()) {  // Start over empty so the load never exceeds design.
      state.PauseTiming();
      f = std::make_unique<CountingBloomFilter>(kDesignKeys, kFpr);
      i = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}

bool Probe(const CountingBloomFilter& f, const std::string& key) { return f.MayContain(key); }
bool Probe(const CountingBloomFilter& f, uint64_t hash) { return f.MayContainHash(hash); }

// Cycles through `items` (keys or their hashes), reporting the share of "yes".
template <typename T>
void Query(benchmark::State& state, const std::vector<T>& items, const CountingBloomFilter& f) {
  size_t i = 0;
  int64_t positives = 0;
  for (auto _ : state) {
    positives += Probe(f, items[i]);
    if (++i == items.size()) i = 0;
  }
  state.counters["positive_rate"] =
      benchmark::Counter(static_cast<double>(positives) / static_cast<double>(state.iterations()));
  state.SetItemsProcessed(state.iterations());
}

void BM_MayContainPositive(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Query(state, Present(kind), Loaded(kind));
}

void BM_MayContainNegative(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  Query(state, Absent(kind), Loaded(kind));
}

void BM_MayContainHashPositive(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  static const std::vector<uint64_t> hashes[2] = {Hashes(Present(0)), Hashes(Present(1))};
  Query(state, hashes[kind], Loaded(kind));
}

void BM_MayContainHashNegative(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  static const std::vector<uint64_t> hashes[2] = {Hashes(Absent(0)), Hashes(Absent(1))};
  Query(state, hashes[kind], Loaded(kind));
}

BENCHMARK(BM_Add)->ArgName("short_keys")->Arg(0)->Arg(1);
BENCHMARK(BM_MayContainPositive)->ArgName("short_keys")->Arg(0)->Arg(1);
BENCHMARK(BM_MayContainNegative)->ArgName("short_keys")->Arg(0)->Arg(1);
BENCHMARK(BM_MayContainHashPositive)->ArgName("short_keys")->Arg(0)->Arg(1);
BENCHMARK(BM_MayContainHashNegative)->ArgName("short_keys")->Arg(0)->Arg(1);

}  // namespace
}  // namespace crescent::cache
