// Eviction policies holding N objects of size 1 (N = 1M, and 64K to show the
// cost once everything fits in cache), driven through the registry with
// virtual calls, as the master and the simulator drive them.
//  - Access/<policy>/N: a hit on a random tracked id.
//  - InsertEvict/<policy>/N: one Evict() then one Insert() of a fresh id, the
//    steady state of a full cache; one iteration is the pair.
//  - Memory/<policy>: the resident memory a policy holding 1M objects grows
//    by, per object (counter bytes_per_object), after 2M hits and 2M
//    evict+insert pairs so every structure has reached its steady size. Run
//    it alone (--benchmark_filter=Memory/NAME): memory freed by an earlier
//    benchmark of the same process is reused and not counted.
// Ids are random 64-bit values, built before timing. Every 16 consecutive
// inserts form a chain (parent = previous id), which only prefix-lru uses.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <vector>

#include "cache/eviction_policy.h"

namespace crescent::cache {
namespace {

constexpr size_t kChain = 16;
// Fresh ids for InsertEvict, reused cyclically: an id comes back after 4M
// inserts, long after it was evicted (with no hits, every policy here evicts
// an object within about N inserts).
constexpr size_t kStream = 4'000'000;

const std::vector<ObjectId>& Stream() {
  static const std::vector<ObjectId> ids = [] {
    std::mt19937_64 rng(42);
    std::vector<ObjectId> v(kStream);
    for (auto& id : v) id = rng() >> 1;  // never kNoParent
    return v;
  }();
  return ids;
}

ObjectId ParentAt(size_t i) { return i % kChain == 0 ? kNoParent : Stream()[i - 1]; }

std::unique_ptr<EvictionPolicy> Filled(const std::string& name, size_t objects) {
  auto policy = std::move(MakePolicy(name, {.capacity = objects}).value());
  for (size_t i = 0; i < objects; ++i) policy->Insert(Stream()[i], 1, {.parent = ParentAt(i)});
  return policy;
}

void BM_Access(benchmark::State& state, const std::string& name) {
  const auto objects = static_cast<size_t>(state.range(0));
  auto policy = Filled(name, objects);
  std::vector<ObjectId> order(Stream().begin(), Stream().begin() + objects);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  size_t i = 0;
  for (auto _ : state) {
    policy->Access(order[i]);
    if (++i == order.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_InsertEvict(benchmark::State& state, const std::string& name) {
  const auto objects = static_cast<size_t>(state.range(0));
  auto policy = Filled(name, objects);
  const auto& stream = Stream();
  size_t i = objects;
  for (auto _ : state) {
    benchmark::DoNotOptimize(policy->Evict());
    policy->Insert(stream[i], 1, {.parent = ParentAt(i)});
    if (++i == stream.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void BM_Memory(benchmark::State& state, const std::string& name) {
  constexpr size_t kObjects = 1'000'000;
  const auto& stream = Stream();  // built before measuring: it is not the policy's
  for (auto _ : state) {
    const uint64_t before = ResidentBytes();
    auto policy = Filled(name, kObjects);
    for (size_t i = 0; i < 2 * kObjects; ++i) {
      policy->Access(stream[(i * 7) % kObjects]);
      if (policy->Evict())
        policy->Insert(stream[kObjects + i], 1, {.parent = ParentAt(kObjects + i)});
    }
    state.counters["bytes_per_object"] =
        static_cast<double>(ResidentBytes() - before) / static_cast<double>(policy->Count());
  }
}

const bool registered = [] {
  for (const auto& name : PolicyNames()) {
    for (auto* bench :
         {benchmark::RegisterBenchmark(("Access/" + name).c_str(), BM_Access, name),
          benchmark::RegisterBenchmark(("InsertEvict/" + name).c_str(), BM_InsertEvict, name)}) {
      bench->Arg(1 << 16)->Arg(1'000'000);
    }
    benchmark::RegisterBenchmark(("Memory/" + name).c_str(), BM_Memory, name)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace crescent::cache
