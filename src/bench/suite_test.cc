// The target checks' choice of reference (and of ratio: per repetition where
// the two ran side by side), and the "how measured"
// notes printed under each reference (pure functions: no timing).
#include "bench/suite.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace crescent::bench {
namespace {

PhaseResult Row(const std::string& system, const std::string& op, uint64_t size, int batch,
                double gb_per_s) {
  PhaseResult r;
  r.system = system;
  r.op = op;
  r.size = size;
  r.batch = batch;
  r.gb_per_s = gb_per_s;
  return r;
}

// A row run side by side, with these per-repetition GB/s (median as its figure).
PhaseResult Reps(const std::string& system, const std::string& op, uint64_t size, int batch,
                 std::vector<double> rep_gb_per_s) {
  PhaseResult r = Row(system, op, size, batch, 0);
  std::vector<double> sorted = rep_gb_per_s;
  std::sort(sorted.begin(), sorted.end());
  r.gb_per_s = sorted[sorted.size() / 2];
  r.reps = static_cast<int>(rep_gb_per_s.size());
  r.rep_gb_per_s = std::move(rep_gb_per_s);
  r.side_by_side = true;
  return r;
}

constexpr uint64_t kMiB = 1 << 20;

// A get measured beside its own memcpy is judged by the median of the
// per-repetition ratios, not by the ratio of the medians, and not against
// the baseline's memcpy measured earlier in the run.
TEST(CheckTargets, ShmGetsPreferTheMemcpyMeasuredBesideThem) {
  // Repetition 2 ran on a slow machine: both sides slowed down together.
  const std::vector<PhaseResult> rows = {
      Row("memcpy", "copy", kMiB, 1, 20.0),  // the baseline's
      Reps("crescent-shm", "get", kMiB, 1, {8.5, 4.5, 9.0}),
      Reps("memcpy", "copy_as_get", kMiB, 1, {10.0, 5.0, 12.0}),
      Reps("crescent-shm", "batch_get", kMiB, 16, {7.0, 3.0, 8.0}),
      Reps("memcpy", "copy_as_batch_get", kMiB, 16, {10.0, 4.0, 10.0}),
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_NE(checks[0].name.find("beside"), std::string::npos) << checks[0].name;
  EXPECT_DOUBLE_EQ(checks[0].reference, 10.0);
  // Per rep 0.85, 0.9, 0.75: median 0.85 (the medians' ratio would be 0.85 too).
  EXPECT_DOUBLE_EQ(checks[0].ratio(), 0.85);
  EXPECT_TRUE(checks[0].met());  // the target is 0.8×
  EXPECT_DOUBLE_EQ(checks[1].reference, 10.0);
  // Per rep 0.7, 0.75, 0.8: median 0.75, where the medians' ratio is 7 / 10.
  EXPECT_DOUBLE_EQ(checks[1].ratio(), 0.75);
  EXPECT_FALSE(checks[1].met());
}

TEST(CheckTargets, WithoutAPairedMemcpyTheBaselineIsUsed) {
  const std::vector<PhaseResult> rows = {
      Row("memcpy", "copy", 4 * kMiB, 1, 10.0),
      Row("crescent-shm", "get", 4 * kMiB, 1, 7.0),
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_NE(checks[0].name.find("baseline"), std::string::npos) << checks[0].name;
  EXPECT_DOUBLE_EQ(checks[0].ratio(), 0.7);
  EXPECT_FALSE(checks[0].met());
}

// Drift between repetitions cancels out of a paired ratio: Redis measured
// beside each repetition, on a machine that sped up and slowed down.
TEST(CheckTargets, RedisRunSideBySideIsComparedRepByRep) {
  const std::vector<PhaseResult> rows = {
      Reps("crescent-tcp", "get", 64 << 10, 1, {0.5, 1.0, 2.0}),
      Reps("redis", "get", 64 << 10, 1, {0.4, 0.8, 1.6}),
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_DOUBLE_EQ(checks[0].ratio(), 1.25);
  EXPECT_GT(checks[0].paired, 0);
  // Misaligned repetitions, or rows not run side by side: the medians' ratio.
  PhaseResult ours = rows[0], theirs = rows[1];
  theirs.rep_gb_per_s = {1.6, 0.4, 0.8};
  EXPECT_DOUBLE_EQ(PairedRatio(ours, theirs), 2.5);  // per rep 1.25, 2.5, 2.5
  theirs.side_by_side = false;
  EXPECT_DOUBLE_EQ(PairedRatio(ours, theirs), 0);
  EXPECT_DOUBLE_EQ(CheckTargets({ours, theirs})[0].ratio(), 1.0 / 0.8);
  theirs.side_by_side = true;
  theirs.rep_gb_per_s = {0.4, 0.8};
  EXPECT_DOUBLE_EQ(PairedRatio(ours, theirs), 0);
}

// TCP batches prefer the raw stream run beside them over the baseline's.
TEST(CheckTargets, TcpBatchesPreferTheStreamMeasuredBesideThem) {
  const std::vector<PhaseResult> rows = {
      Row("tcp", "stream", kMiB, 1, 3.0),  // the baseline's, measured first
      Reps("crescent-tcp", "batch_put", kMiB, 16, {1.8, 2.0, 0.9}),
      Reps("tcp", "stream_as_batch_put", kMiB, 1, {2.0, 2.0, 1.0}),
      Reps("tcp", "stream_as_batch_get", kMiB, 1, {9.0, 9.0, 9.0}),  // not a put's reference
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_NE(checks[0].name.find("raw TCP beside it"), std::string::npos) << checks[0].name;
  EXPECT_DOUBLE_EQ(checks[0].ratio(), 0.9);
  EXPECT_TRUE(checks[0].met());
  const std::vector<TargetCheck> old = CheckTargets({rows[0], rows[1]});
  ASSERT_EQ(old.size(), 1u);
  EXPECT_NE(old[0].name.find("baseline"), std::string::npos) << old[0].name;
  EXPECT_DOUBLE_EQ(old[0].ratio(), 1.8 / 3.0);
}

// Puts are judged against the stream that lands in distinct memory as a put
// does, gets against the one that reads back out of it.
TEST(CheckTargets, TcpGetsAndPutsEachHaveTheirOwnStream) {
  const std::vector<PhaseResult> rows = {
      Reps("crescent-tcp", "get", kMiB, 1, {1.0, 3.0, 3.0}),
      Reps("crescent-tcp", "put", kMiB, 1, {1.0, 1.0, 1.0}),
      Reps("tcp", "stream_as_batch_put", kMiB, 1, {1.0, 1.0, 1.0}),
      Reps("tcp", "stream_as_batch_get", kMiB, 1, {2.0, 3.0, 3.0}),
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 2u);
  for (const TargetCheck& c : checks) {
    EXPECT_NE(c.name.find("raw TCP beside it"), std::string::npos) << c.name;
    EXPECT_DOUBLE_EQ(c.ratio(), 1.0) << c.name;  // get: median of 0.5, 1, 1
  }
}

// The control-plane targets: exists at 1 and 128 keys against Redis (1.5x),
// a prefix query's p50 against 60 us (lower is better), one 64 KiB put or get
// against Redis (1.0x).
TEST(CheckTargets, ControlPlaneTargets) {
  auto keys = [](const std::string& system, const std::string& op, int batch, double miss,
                 double keys_per_s, double p50) {
    PhaseResult r = Row(system, op, 0, batch, 0);
    r.miss = miss;
    r.items_per_s = keys_per_s;
    r.p50_us = p50;
    return r;
  };
  const std::vector<PhaseResult> rows = {
      keys("crescent", "exists", 1, 0.5, 40000, 20), keys("redis", "exists", 1, 0.5, 20000, 45),
      keys("crescent", "exists", 16, 0.5, 1, 1),     keys("redis", "exists", 16, 0.5, 1, 1),
      keys("crescent", "exists", 128, 0.9, 1.4e6, 60), keys("redis", "exists", 128, 0.9, 1e6, 90),
      keys("crescent", "prefix", 128, 0.0, 2e6, 48),  keys("crescent", "prefix", 1, 0.0, 1, 99),
      Row("crescent-tcp", "put", 64 << 10, 1, 0.5),  Row("redis", "put", 64 << 10, 1, 0.4),
  };
  const std::vector<TargetCheck> checks = CheckTargets(rows);
  ASSERT_EQ(checks.size(), 4u);  // batch 16 and prefix batch 1 have no target
  EXPECT_NE(checks[0].name.find("exists ×1 miss 0.50"), std::string::npos) << checks[0].name;
  EXPECT_DOUBLE_EQ(checks[0].ratio(), 2.0);
  EXPECT_TRUE(checks[0].met());
  EXPECT_DOUBLE_EQ(checks[1].ratio(), 1.4);
  EXPECT_FALSE(checks[1].met());  // the target is 1.5x
  EXPECT_NE(checks[2].name.find("prefix ×128"), std::string::npos) << checks[2].name;
  EXPECT_DOUBLE_EQ(checks[2].ratio(), 60.0 / 48);
  EXPECT_TRUE(checks[2].met());
  EXPECT_NE(checks[3].name.find("tcp put 64KiB"), std::string::npos) << checks[3].name;
  EXPECT_DOUBLE_EQ(checks[3].ratio(), 1.25);
  EXPECT_TRUE(checks[3].met());
}

// Each reference says how it was measured: sizes, threads, cache state and
// whether anything waits for a reply.
TEST(HowMeasured, NamesSizesThreadsCacheStateAndPipelining) {
  WorkloadOptions o;
  o.sizes = {kMiB, 4 * kMiB};
  o.clients = 2;
  o.batches = {16};
  const std::string base = HowBaselineMeasured(o);
  for (const char* want : {"1MiB, 4MiB", "1 and 2 stream(s)", "1 and 2 thread(s)", "cold in cache",
                           "warm destination", "no pipelining limit", "256 MiB"}) {
    EXPECT_NE(base.find(want), std::string::npos) << want << " in " << base;
  }
  const std::string beside = HowMemcpyBesideGetsMeasured(o);
  for (const char* want : {"2 client thread(s)", "16 per timed call", "same buffer slots",
                           "cold in cache", "median over the repetitions", "checksum"}) {
    EXPECT_NE(beside.find(want), std::string::npos) << want << " in " << beside;
  }
  const std::string redis = HowRedisMeasured(o, "7.0.15");
  for (const char* want : {"7.0.15", "one connection per client thread (2)", "a pipeline of 16",
                           "one SET or GET per round trip", "Side by side"}) {
    EXPECT_NE(redis.find(want), std::string::npos) << want << " in " << redis;
  }
  const std::string stream = HowStreamBesideBatchesMeasured(o);
  for (const char* want : {"right before", "2 loopback TCP stream(s)", "median over the repetitions"}) {
    EXPECT_NE(stream.find(want), std::string::npos) << want << " in " << stream;
  }
}

}  // namespace
}  // namespace crescent::bench
