// OffsetAllocator on a 64 GiB segment (granularity 64 B), as the master uses it.
// Sizes are KV-cache shaped: 64 KiB pages and 1-4 MiB objects. Random choices
// are drawn before timing. Counters: ns_per_op (one Allocate or one Free),
// bytes_per_alloc (node table bytes / live allocations), fail_rate (share of
// Allocate calls refused with kNoSpace).
//
//  BM_AllocFreePair/<page_percent>: Allocate then Free one object in a segment
//    half filled by a churned mix, so the bins are realistically fragmented.
//  BM_SteadyChurn/<page_percent>: the segment held at ~90% full; each
//    iteration frees a random live allocation and allocates a new random size
//    (on kNoSpace it frees another and retries, as eviction would).
//  BM_Serialise / BM_Restore: a snapshot of the churned 90% state.
// page_percent is the share of 64 KiB pages; the rest are 1-4 MiB objects.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cache/offset_allocator.h"

namespace crescent::cache {
namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
constexpr uint64_t kSegment = 64 * GiB;
constexpr size_t kRing = 1 << 16;  // pre-drawn random values, reused cyclically

struct Draws {
  Draws(int page_percent, uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < kRing; ++i) {
      const bool page = static_cast<int>(rng() % 100) < page_percent;
      sizes.push_back(page ? 64 * KiB : MiB + rng() % (3 * MiB + 1));
      picks.push_back(rng());
    }
  }
  uint64_t size(size_t i) const { return sizes[i % kRing]; }
  uint64_t pick(size_t i) const { return picks[i % kRing]; }
  std::vector<uint64_t> sizes;
  std::vector<uint64_t> picks;
};

// A segment filled to `fill` of capacity, then churned so free space is
// scattered; also the draws that drive what comes next.
struct AgedSegment {
  AgedSegment(int page_percent, uint64_t seed, double fill)
      : d(page_percent, seed), a(std::move(OffsetAllocator::Create(kSegment)).value()) {
    while (static_cast<double>(a.used_bytes()) < fill * static_cast<double>(kSegment)) {
      auto r = a.Allocate(d.size(i++));
      if (!r.ok()) break;
      live.push_back(*r);
    }
    for (size_t n = live.size(); n > 0; --n) FreeThenAllocate();
  }

  // Frees a random allocation, then allocates a random size, freeing more
  // while it does not fit. Returns {operations, refused allocations}.
  std::pair<double, double> FreeThenAllocate() {
    double ops = 1;
    double fails = 0;
    FreeOne();
    while (true) {
      auto r = a.Allocate(d.size(i++));
      ++ops;
      if (r.ok()) {
        live.push_back(*r);
        return {ops, fails};
      }
      ++fails;
      FreeOne();
      ++ops;
    }
  }

  void FreeOne() {
    const size_t k = d.pick(i) % live.size();
    (void)a.Free(live[k]);
    live[k] = live.back();
    live.pop_back();
  }

  Draws d;
  OffsetAllocator a;
  std::vector<Allocation> live;
  size_t i = 0;
};

void SetCounters(benchmark::State& state, const OffsetAllocator& a, double ops, double fails,
                 double allocs) {
  state.counters["ns_per_op"] =
      benchmark::Counter(ops, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  const OffsetAllocatorStats s = a.Stats();
  state.counters["bytes_per_alloc"] =
      static_cast<double>(s.node_slots * 32) / static_cast<double>(s.allocations);
  state.counters["live_allocs"] = static_cast<double>(s.allocations);
  state.counters["free_regions"] = static_cast<double>(s.free_regions);
  state.counters["fail_rate"] = allocs > 0 ? fails / allocs : 0;
}

void BM_AllocFreePair(benchmark::State& state) {
  AgedSegment seg(static_cast<int>(state.range(0)), 1, 0.5);
  for (auto _ : state) {
    auto r = seg.a.Allocate(seg.d.size(seg.i++));
    benchmark::DoNotOptimize(r);
    (void)seg.a.Free(*r);
  }
  const auto n = static_cast<double>(state.iterations());
  SetCounters(state, seg.a, 2 * n, 0, n);
}
BENCHMARK(BM_AllocFreePair)->Arg(100)->Arg(80)->Arg(0);

void BM_SteadyChurn(benchmark::State& state) {
  AgedSegment seg(static_cast<int>(state.range(0)), 2, 0.9);
  double ops = 0;
  double fails = 0;
  for (auto _ : state) {
    const auto [o, f] = seg.FreeThenAllocate();
    ops += o;
    fails += f;
  }
  SetCounters(state, seg.a, ops, fails, static_cast<double>(state.iterations()) + fails);
}
BENCHMARK(BM_SteadyChurn)->Arg(100)->Arg(80)->Arg(50);

// The churned 90% state of an 80%-pages mix, built once for both snapshot benches.
const OffsetAllocator& Snapshotted() {
  static const AgedSegment seg(80, 3, 0.9);
  return seg.a;
}

void BM_Serialise(benchmark::State& state) {
  const OffsetAllocator& a = Snapshotted();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string blob = a.Serialise();
    bytes = blob.size();
    benchmark::DoNotOptimize(blob);
  }
  const OffsetAllocatorStats s = a.Stats();
  state.counters["blob_bytes_per_region"] =
      static_cast<double>(bytes) / static_cast<double>(s.allocations + s.free_regions);
  state.counters["live_allocs"] = static_cast<double>(s.allocations);
}
BENCHMARK(BM_Serialise)->Unit(benchmark::kMillisecond);

void BM_Restore(benchmark::State& state) {
  const std::string blob = Snapshotted().Serialise();
  for (auto _ : state) {
    auto r = OffsetAllocator::Restore(blob);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Restore)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace crescent::cache
