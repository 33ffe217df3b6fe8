// What naming a grant costs (common/keyed_hash.h): one SipHash-2-4 of a
// 64-bit word, as the master computes for each put token and for each replica
// it describes (its placement), against the XOR with one random value that
// it replaced.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "common/keyed_hash.h"

namespace {

void BM_KeyedHashOfAWord(benchmark::State& state) {
  const crescent::KeyedHash h = crescent::KeyedHash::Random();
  uint64_t id = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(h.Hash(id));
    ++id;
  }
}
BENCHMARK(BM_KeyedHashOfAWord);

void BM_XorWithARandomValue(benchmark::State& state) {
  uint64_t value = crescent::KeyedHash::Random().Hash(uint64_t{0});
  benchmark::DoNotOptimize(value);
  uint64_t id = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(id ^ value);
    ++id;
  }
}
BENCHMARK(BM_XorWithARandomValue);

}  // namespace
