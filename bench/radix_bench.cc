// RadixTree micro-benchmarks over 1M keys: Insert, Find and LongestPrefixOf,
// for string keys ("model-a/<32 hex>", and bare 32-hex keys) and for chains of
// page ids (every prefix of a request's page-hash chain is a key).
//
// Each Insert run prints per_insert (CPU time) and two memory figures per key:
// model_B_per_key (MemoryBytes() / Size()) and, on glibc, heap_B_per_key (the
// growth of the allocator's in-use bytes while the tree was built).
// Lookup runs do one lookup per iteration, over all keys in a shuffled order,
// so the Time column is ns/op. BM_HashMapFindBaseline does the same Find
// queries on absl::flat_hash_map, to calibrate the figures on a given machine.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "cache/radix_tree.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace crescent::cache {
namespace {

constexpr size_t kKeys = 1'000'000;

size_t HeapInUse() {
#if defined(__GLIBC__)
  return mallinfo2().uordblks;
#else
  return 0;
#endif
}

// A key set and its lookup queries, as views into arenas owned here.
template <typename KeyView>
struct Workload {
  std::vector<KeyView> keys;
  std::vector<KeyView> hits;    // LongestPrefixOf(hits[i]) finds a stored key shorter than it
  std::vector<KeyView> misses;  // no stored key is a prefix of these
  std::vector<uint32_t> order;  // a shuffled permutation of [0, kKeys)
};

std::vector<uint32_t> Shuffled(size_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  return order;
}

// kKeys keys `prefix` + 32 random hex digits; each hit query is its key
// followed by "/page-0042", stored right after the key in the arena.
Workload<std::string_view> MakeStrings(std::string_view prefix) {
  static constexpr std::string_view kSuffix = "/page-0042";
  static std::vector<std::string> arenas;  // one per workload, alive for the program
  std::mt19937_64 rng(42);
  auto hex32 = [&rng](std::string& out) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 2; ++i) {
      uint64_t bits = rng();
      for (int j = 0; j < 16; ++j, bits >>= 4) out.push_back(kHex[bits & 15]);
    }
  };
  const size_t key_len = prefix.size() + 32;
  std::string& arena = arenas.emplace_back();
  arena.reserve(kKeys * (key_len + kSuffix.size()) * 2);  // keys+suffixes, then misses
  for (size_t i = 0; i < kKeys; ++i) {
    arena += prefix;
    hex32(arena);
    arena += kSuffix;
  }
  for (size_t i = 0; i < kKeys; ++i) {  // fresh random keys: stored with chance ~1e-32
    arena += prefix;
    hex32(arena);
  }
  Workload<std::string_view> w;
  const size_t stride = key_len + kSuffix.size();
  for (size_t i = 0; i < kKeys; ++i) {
    w.keys.emplace_back(arena.data() + i * stride, key_len);
    w.hits.emplace_back(arena.data() + i * stride, stride);
    w.misses.emplace_back(arena.data() + kKeys * stride + i * key_len, key_len);
  }
  w.order = Shuffled(kKeys, 7);
  return w;
}

// Requests of 8 pages from one of 100 shared system prompts, then 42 pages of
// their own; every prefix of every chain is a key, about 1M in all. A hit
// query is a whole chain plus 8 pages never stored; a miss starts with one.
Workload<std::span<const uint64_t>> MakeChains() {
  constexpr size_t kPrompts = 100, kPromptPages = 8, kOwnPages = 42;
  constexpr size_t kChainLen = kPromptPages + kOwnPages;
  constexpr size_t kChains = (kKeys - kPrompts * kPromptPages) / kOwnPages;
  static std::vector<uint64_t> pages;
  std::mt19937_64 rng(43);
  std::vector<uint64_t> prompts(kPrompts * kPromptPages);
  for (uint64_t& page : prompts) page = rng();
  pages.reserve(kChains * (kChainLen + 8) + 8 * kChains);
  for (size_t c = 0; c < kChains; ++c) {
    size_t prompt = rng() % kPrompts;
    pages.insert(pages.end(), prompts.begin() + prompt * kPromptPages,
                 prompts.begin() + (prompt + 1) * kPromptPages);
    for (size_t i = 0; i < kOwnPages + 8; ++i) pages.push_back(rng());
  }
  const size_t miss_base = pages.size();
  for (size_t i = 0; i < 8 * kChains; ++i) pages.push_back(rng());

  Workload<std::span<const uint64_t>> w;
  for (size_t c = 0; c < kChains; ++c) {
    std::span<const uint64_t> chain(pages.data() + c * (kChainLen + 8), kChainLen + 8);
    for (size_t n = 1; n <= kChainLen; ++n) w.keys.push_back(chain.first(n));
    w.hits.push_back(chain);
    w.misses.emplace_back(pages.data() + miss_base + 8 * c, 8);
  }
  w.order = Shuffled(w.keys.size(), 7);
  return w;
}

const Workload<std::string_view>& Hex32Keys() {
  static const auto w = MakeStrings("");
  return w;
}
const Workload<std::string_view>& ModelKeys() {
  static const auto w = MakeStrings("model-a/");
  return w;
}
const Workload<std::span<const uint64_t>>& ChainKeys() {
  static const auto w = MakeChains();
  return w;
}

template <typename Tree, typename W>
void BM_Insert(benchmark::State& state, const W& (*workload)()) {
  const W& w = workload();
  for (auto _ : state) {
    std::optional<Tree> tree(std::in_place);
    size_t heap_before = HeapInUse();
    // In generation order: a chain's prefixes come before their extensions.
    for (uint32_t i = 0; i < w.keys.size(); ++i) tree->Insert(w.keys[i], i);
    state.PauseTiming();
    double keys = static_cast<double>(tree->Size());
    state.counters["keys"] = keys;
    state.counters["model_B_per_key"] = static_cast<double>(tree->MemoryBytes()) / keys;
    if (heap_before != 0) {
      state.counters["heap_B_per_key"] = static_cast<double>(HeapInUse() - heap_before) / keys;
    }
    tree.reset();
    state.ResumeTiming();
  }
  // CPU seconds per insert (printed with an SI prefix: "650n" is 650 ns).
  state.counters["per_insert"] = benchmark::Counter(
      static_cast<double>(w.keys.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The tree of a workload, built once (per workload) for all its lookup benchmarks.
template <typename Tree, typename W, const W& (*workload)()>
const Tree& BuiltTree() {
  static const Tree tree = [] {
    const W& w = workload();
    Tree t;
    for (uint32_t i = 0; i < w.keys.size(); ++i) t.Insert(w.keys[i], i);
    return t;
  }();
  return tree;
}

enum class Lookup { kFind, kLongestPrefixHit, kLongestPrefixMiss };

template <typename Tree, typename W, const W& (*workload)()>
void BM_Lookup(benchmark::State& state, Lookup lookup) {
  const W& w = workload();
  const Tree& tree = BuiltTree<Tree, W, workload>();
  const std::vector<typename Tree::KeyView>& queries = lookup == Lookup::kFind ? w.keys
                                                       : lookup == Lookup::kLongestPrefixHit
                                                           ? w.hits
                                                           : w.misses;
  size_t i = 0, found = 0;
  for (auto _ : state) {
    typename Tree::KeyView query = queries[w.order[i] % queries.size()];
    if (++i == w.order.size()) i = 0;
    if (lookup == Lookup::kFind) {
      const uint64_t* value = tree.Find(query);
      benchmark::DoNotOptimize(value);
      found += value != nullptr;
    } else {
      auto match = tree.LongestPrefixOf(query);
      benchmark::DoNotOptimize(match);
      found += match.has_value();
    }
  }
  state.counters["found_ratio"] =
      static_cast<double>(found) / static_cast<double>(state.iterations());
}

using Strings = StringRadixTree<uint64_t>;
using Chains = PageChainRadixTree<uint64_t>;
using StringWorkload = Workload<std::string_view>;
using ChainWorkload = Workload<std::span<const uint64_t>>;

void BM_StringInsert(benchmark::State& state, const StringWorkload& (*workload)()) {
  BM_Insert<Strings>(state, workload);
}
void BM_ChainInsert(benchmark::State& state) { BM_Insert<Chains>(state, &ChainKeys); }

BENCHMARK_CAPTURE(BM_StringInsert, hex32, &Hex32Keys)->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StringInsert, model_hex32, &ModelKeys)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainInsert)->Iterations(2)->Unit(benchmark::kMillisecond);

void BM_StringLookup(benchmark::State& state, Lookup lookup) {
  BM_Lookup<Strings, StringWorkload, &ModelKeys>(state, lookup);
}
void BM_ChainLookup(benchmark::State& state, Lookup lookup) {
  BM_Lookup<Chains, ChainWorkload, &ChainKeys>(state, lookup);
}

// Baseline for reading the figures above on a given machine: the same Find
// queries against a hash map of the same keys.
void BM_HashMapFindBaseline(benchmark::State& state) {
  const StringWorkload& w = ModelKeys();
  static const auto* map = [&w] {
    auto* m = new absl::flat_hash_map<std::string_view, uint64_t>();
    for (uint32_t i = 0; i < w.keys.size(); ++i) m->emplace(w.keys[i], i);
    return m;
  }();
  size_t i = 0;
  for (auto _ : state) {
    auto it = map->find(w.keys[w.order[i]]);
    benchmark::DoNotOptimize(it);
    if (++i == w.order.size()) i = 0;
  }
}

BENCHMARK_CAPTURE(BM_StringLookup, find_model_hex32, Lookup::kFind);
BENCHMARK_CAPTURE(BM_StringLookup, longest_prefix_hit_model_hex32, Lookup::kLongestPrefixHit);
BENCHMARK_CAPTURE(BM_StringLookup, longest_prefix_miss_model_hex32, Lookup::kLongestPrefixMiss);
BENCHMARK_CAPTURE(BM_ChainLookup, find_page_chains, Lookup::kFind);
BENCHMARK_CAPTURE(BM_ChainLookup, longest_prefix_hit_page_chains, Lookup::kLongestPrefixHit);
BENCHMARK_CAPTURE(BM_ChainLookup, longest_prefix_miss_page_chains, Lookup::kLongestPrefixMiss);
BENCHMARK(BM_HashMapFindBaseline);

}  // namespace
}  // namespace crescent::cache
