// The aggregation of `crescent bench clients` (many_clients.h): the summed
// rate, the merged latencies, the fairness columns from the repetition of
// median rate, and the worker's result line read back (pure: no processes).
#include "bench/many_clients.h"

#include <gtest/gtest.h>

namespace crescent::bench {
namespace {

WorkerResult Worker(uint64_t calls, double seconds, std::vector<double> latency_us,
                    uint64_t errors = 0) {
  WorkerResult w;
  w.calls = calls;
  w.items = calls * 128;
  w.seconds = seconds;
  w.latency_us = std::move(latency_us);
  w.errors = errors;
  if (errors > 0) w.first_error = "OBJECT_NOT_FOUND";
  return w;
}

TEST(ManyClients, SumsRatesAndMergesLatencies) {
  ManyClientsRep rep;
  rep.workers = {Worker(100, 2.0, {10, 10, 10, 10}), Worker(300, 1.5, {20, 20, 20, 90})};
  rep.wall_s = 2.0;
  rep.server_cpu_s = 3.0;
  rep.client_cpu_s = 1.0;
  const ManyClientsRow row = Aggregate("exists", 2, {rep});
  EXPECT_EQ(row.workload, "exists");
  EXPECT_EQ(row.clients, 2);
  EXPECT_EQ(row.reps, 1);
  // Each worker's calls over its own window: 50/s and 200/s.
  EXPECT_DOUBLE_EQ(row.ops_per_s, 250.0);
  EXPECT_DOUBLE_EQ(row.items_per_s, 250.0 * 128);
  EXPECT_DOUBLE_EQ(row.client_min_ops, 50.0);
  EXPECT_DOUBLE_EQ(row.client_max_ops, 200.0);
  // The eight latencies merged: nearest-rank p50 is the 4th (10), p99 the 8th.
  EXPECT_DOUBLE_EQ(row.p50_us, 10.0);
  EXPECT_DOUBLE_EQ(row.p99_us, 90.0);
  EXPECT_DOUBLE_EQ(row.server_cores, 1.5);
  EXPECT_DOUBLE_EQ(row.client_cores, 0.5);
  EXPECT_EQ(row.errors, 0u);
}

TEST(ManyClients, FairnessComesFromTheRepetitionOfMedianRate) {
  auto rep = [](uint64_t a, uint64_t b, uint64_t errors = 0) {
    ManyClientsRep r;
    r.workers = {Worker(a, 1.0, {1}), Worker(b, 1.0, {1}, errors)};
    return r;
  };
  // Rates 300, 1100, 500: the median is the third repetition's.
  const ManyClientsRow row = Aggregate("put", 2, {rep(100, 200), rep(1000, 100, 2), rep(200, 300)});
  EXPECT_DOUBLE_EQ(row.ops_per_s, 500.0);
  EXPECT_EQ(row.rep_ops_per_s, (std::vector<double>{300, 1100, 500}));
  EXPECT_DOUBLE_EQ(row.client_min_ops, 200.0);
  EXPECT_DOUBLE_EQ(row.client_max_ops, 300.0);
  EXPECT_EQ(row.client_ops_per_s, (std::vector<double>{200, 300}));
  EXPECT_EQ(row.errors, 2u);
  EXPECT_EQ(row.first_error, "OBJECT_NOT_FOUND");
  // Two repetitions: the lower one's clients.
  const ManyClientsRow two = Aggregate("put", 2, {rep(1000, 100), rep(100, 200)});
  EXPECT_DOUBLE_EQ(two.client_min_ops, 100.0);
  EXPECT_DOUBLE_EQ(two.client_max_ops, 200.0);
}

TEST(ManyClients, WorkerResultLineRoundTrips) {
  const WorkerResult w = Worker(7, 0.25, {3.5, 4.5}, 1);
  StatusOr<WorkerResult> back = WorkerResultFromJson(ToJson(w).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->calls, 7u);
  EXPECT_EQ(back->items, 7u * 128);
  EXPECT_DOUBLE_EQ(back->seconds, 0.25);
  EXPECT_EQ(back->latency_us, (std::vector<double>{3.5, 4.5}));
  EXPECT_EQ(back->errors, 1u);
  EXPECT_EQ(back->first_error, "OBJECT_NOT_FOUND");
  EXPECT_FALSE(WorkerResultFromJson("ready").ok());
  EXPECT_FALSE(WorkerResultFromJson("").ok());
}

TEST(ManyClients, WorkloadNamesRoundTrip) {
  for (ManyWorkload w :
       {ManyWorkload::kExists, ManyWorkload::kPrefix, ManyWorkload::kPut, ManyWorkload::kGet}) {
    ManyWorkload back = ManyWorkload::kExists;
    ASSERT_TRUE(ParseWorkload(WorkloadName(w), back));
    EXPECT_EQ(back, w);
  }
  ManyWorkload w;
  EXPECT_FALSE(ParseWorkload("scan", w));
}

}  // namespace
}  // namespace crescent::bench
