// policy_growth_perf: the longest single Insert() while a policy grows to N
// objects, the pause a PutEnd meets under the master's policy lock when the
// policy's index or node array grows (docs/durability.md, "Figures").
//
//   policy_growth_perf [--objects N] [--policy NAME] [--reserve 0|1] [--cpu 0|1]
//
// Inserts N fresh ids (random 64-bit values, built before timing) into one
// policy from the registry and times each call. Prints the total, how many
// calls took over 1 ms and over 10 ms, and the five slowest with their insert
// numbers (a growth lands on a fixed one: a power of two for a node array).
// --reserve 1 calls Reserve(N) first, as a restore does. Calls are timed on
// the steady clock, or with --cpu 1 on the thread's CPU clock (a system call
// per insert, but on a busy host it leaves out the time the thread waited for
// a core, which the steady clock counts as a pause). Each slow insert is shown
// with the page faults it took (getrusage per call): on a VM where a fault
// costs tens of microseconds they, not the structure, can make the slowest
// call, so "slowest without a fault" is printed too.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cache/eviction_policy.h"
#include "perf_util.h"

int main(int argc, char** argv) {
  uint64_t objects = 12'000'000;
  std::string policy_name = "lru";
  bool reserve = false;
  bool cpu = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--objects") == 0) {
      objects = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--policy") == 0) {
      policy_name = argv[i + 1];
    } else if (std::strcmp(argv[i], "--reserve") == 0) {
      reserve = std::strcmp(argv[i + 1], "0") != 0;
    } else if (std::strcmp(argv[i], "--cpu") == 0) {
      cpu = std::strcmp(argv[i + 1], "0") != 0;
    } else {
      std::fprintf(stderr, "usage: %s [--objects N] [--policy NAME] [--reserve 0|1] [--cpu 0|1]\n",
                   argv[0]);
      return 2;
    }
  }
  auto made = crescent::cache::MakePolicy(policy_name);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    return 2;
  }
  crescent::cache::EvictionPolicy& policy = **made;
  std::mt19937_64 rng(7);
  std::vector<crescent::cache::ObjectId> ids(objects);
  for (auto& id : ids) id = rng() >> 1;  // never kNoParent
  if (reserve) policy.Reserve(objects);
  using Clock = std::chrono::steady_clock;
  auto now_ms = [cpu] {
    if (!cpu) {
      return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
    }
    return static_cast<double>(crescent::perf::ThreadCpuNs()) / 1e6;
  };
  auto faults = [] {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return static_cast<uint64_t>(usage.ru_minflt + usage.ru_majflt);
  };
  struct Slow {
    double ms;
    uint64_t at;      // insert number
    uint64_t faults;  // page faults during it
    bool operator>(const Slow& o) const { return ms > o.ms; }
  };
  uint64_t over_1ms = 0, over_10ms = 0;
  std::vector<Slow> slowest;  // the kShown slowest
  constexpr size_t kShown = 5;
  Slow slowest_unfaulted{0, 0, 0};
  const auto start = Clock::now();
  for (uint64_t i = 0; i < objects; ++i) {
    const uint64_t f0 = faults();
    const double t0 = now_ms();
    policy.Insert(ids[i], 1);
    const double ms = now_ms() - t0;
    const uint64_t faulted = faults() - f0;
    over_1ms += ms > 1 ? 1 : 0;
    over_10ms += ms > 10 ? 1 : 0;
    if (faulted == 0 && ms > slowest_unfaulted.ms) slowest_unfaulted = {ms, i + 1, 0};
    if (slowest.size() < kShown || ms > slowest.back().ms) {
      if (slowest.size() == kShown) slowest.pop_back();
      slowest.push_back({ms, i + 1, faulted});
      std::sort(slowest.begin(), slowest.end(), std::greater<>());
    }
  }
  const double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "policy %s, %llu inserts%s: %.2f s in all; timed on the %s clock: %llu over 1 ms, "
      "%llu over 10 ms\n",
      policy_name.c_str(), static_cast<unsigned long long>(objects),
      reserve ? " after Reserve" : "", total_s, cpu ? "thread's CPU" : "steady",
      static_cast<unsigned long long>(over_1ms), static_cast<unsigned long long>(over_10ms));
  std::printf("slowest:");
  for (const auto& [ms, at, faulted] : slowest) {
    std::printf(" %.1f ms (insert %llu, %llu faults)", ms, static_cast<unsigned long long>(at),
                static_cast<unsigned long long>(faulted));
  }
  std::printf("\nslowest without a page fault: %.3f ms (insert %llu)\n", slowest_unfaulted.ms,
              static_cast<unsigned long long>(slowest_unfaulted.at));
  return 0;
}
