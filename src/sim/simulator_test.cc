#include "sim/simulator.h"

#include <gtest/gtest.h>

#include "sim/random_trace_for_test.h"

namespace crescent::sim {
namespace {

Trace MustParse(const std::string& text) {
  auto trace = ParseTrace(text, "test");
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  return std::move(*trace);
}

SimStats RunPolicy(const Trace& trace, std::string_view policy_name, uint64_t capacity) {
  cache::PolicyOptions options;
  options.capacity = capacity;
  auto policy = MakeSimPolicy(trace, policy_name, options);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return Simulate(trace, capacity, **policy);
}

// Six requests over blocks 1..4, capacity 3 blocks, 11 block references:
//   R1 [1,2]  R2 [1,3]  R3 [4]  R4 [1,2]  R5 [1,3]  R6 [4,3]
const char* kTinyTrace =
    "{\"hash_ids\": [1, 2]}\n"
    "{\"hash_ids\": [1, 3]}\n"
    "{\"hash_ids\": [4]}\n"
    "{\"hash_ids\": [1, 2]}\n"
    "{\"hash_ids\": [1, 3]}\n"
    "{\"hash_ids\": [4, 3]}\n";

// LRU, cache shown least recently used first:
//   R1: 1 miss, 2 miss                 -> hits 0; cache 1 2
//   R2: 1 hit, 3 miss                  -> hits 1; touch 1, insert 3: 2 1 3
//   R3: 4 miss; full, evict 2          -> hits 0; 1 3 4
//   R4: 1 hit, 2 miss                  -> hits 1; touch 1: 3 4 1; evict 3, insert 2: 4 1 2
//   R5: 1 hit, 3 miss                  -> hits 1; touch 1: 4 2 1; evict 4, insert 3: 2 1 3
//   R6: 4 miss (3 is cached but follows a miss, so it does not count)
//                                      -> hits 0; evict 2, insert 4: 1 3 4; touch 3
// Total 3 hit blocks of 11.
TEST(SimulatorTest, TinyTraceLruByHand) {
  Trace trace = MustParse(kTinyTrace);
  SimStats stats = RunPolicy(trace, "lru", 3);
  EXPECT_EQ(stats.requests, 6u);
  EXPECT_EQ(stats.block_refs, 11u);
  EXPECT_EQ(stats.hit_blocks, 3u);
  EXPECT_DOUBLE_EQ(stats.hit_ratio(), 3.0 / 11.0);
}

// FIFO, queue shown oldest first; hits do not reorder it:
//   R1: 1 miss, 2 miss                 -> hits 0; 1 2
//   R2: 1 hit, 3 miss                  -> hits 1; 1 2 3
//   R3: 4 miss; evict 1                -> hits 0; 2 3 4
//   R4: 1 miss (2 is cached but after the miss)
//                                      -> hits 0; evict 2, insert 1: 3 4 1;
//                                         2 is now gone: evict 3, insert 2: 4 1 2
//   R5: 1 hit, 3 miss                  -> hits 1; evict 4, insert 3: 1 2 3
//   R6: 4 miss                         -> hits 0; evict 1, insert 4: 2 3 4; 3 hit (no count)
// Total 2 hit blocks of 11.
TEST(SimulatorTest, TinyTraceFifoByHand) {
  Trace trace = MustParse(kTinyTrace);
  SimStats stats = RunPolicy(trace, "fifo", 3);
  EXPECT_EQ(stats.block_refs, 11u);
  EXPECT_EQ(stats.hit_blocks, 2u);
}

TEST(SimulatorTest, EverythingFitsMeansOnlyColdMisses) {
  // With room for every block, a block misses only on its first reference,
  // and a request's hits stop at its first new block.
  Trace trace = MustParse(
      "{\"hash_ids\": [1, 2, 3]}\n"
      "{\"hash_ids\": [1, 2, 4]}\n"     // 2 hits
      "{\"hash_ids\": [5, 1, 2]}\n"     // 0 hits: 5 is new
      "{\"hash_ids\": [1, 2, 4, 5]}\n"  // 4 hits
  );
  for (const std::string& name : SimPolicyNames()) {
    SimStats stats = RunPolicy(trace, name, trace.distinct_blocks());
    EXPECT_EQ(stats.hit_blocks, 6u) << name;
    EXPECT_EQ(stats.block_refs, 13u) << name;
  }
}

// Records the calls the simulator makes, delegating to a real LRU.
class RecordingPolicy final : public cache::EvictionPolicy {
 public:
  explicit RecordingPolicy(uint64_t capacity) {
    inner_ =
        std::move(cache::MakePolicy("lru", cache::PolicyOptions{.capacity = capacity}).value());
  }
  void Insert(cache::ObjectId id, uint64_t size, const cache::InsertInfo& info = {}) override {
    Log('I', id);
    log += '/';
    log += info.parent == cache::kNoParent ? std::string("-") : std::to_string(info.parent);
    log += '/';
    log += std::to_string(size);
    if (info.ends_write) log += '$';
    log += ' ';
    inner_->Insert(id, size, info);
  }
  void Access(cache::ObjectId id) override {
    Log('A', id);
    log += ' ';
    inner_->Access(id);
  }
  void Remove(cache::ObjectId id) override { inner_->Remove(id); }
  std::optional<cache::ObjectId> Evict(const cache::SpareFn& spare) override {
    auto victim = inner_->Evict(spare);
    Log('E', victim.value_or(cache::kNoParent));
    log += ' ';
    return victim;
  }
  bool Contains(cache::ObjectId id) const override { return inner_->Contains(id); }
  size_t Count() const override { return inner_->Count(); }
  uint64_t UsedSize() const override { return inner_->UsedSize(); }
  void SetCapacity(uint64_t capacity) override { inner_->SetCapacity(capacity); }
  std::string_view Name() const override { return "recording"; }

  std::string log;

 private:
  // Appended piecewise: "I" + std::to_string(...) trips a GCC 12 -Wrestrict false positive.
  void Log(char op, cache::ObjectId id) {
    log += op;
    log += id == cache::kNoParent ? std::string("?") : std::to_string(id);
  }

  std::unique_ptr<cache::EvictionPolicy> inner_;
};

TEST(SimulatorTest, OneAccessOrInsertPerReferenceWithChainParents) {
  // Hash ids 10, 11, 12 become dense ids 0, 1, 2.
  Trace trace = MustParse("{\"hash_ids\": [10, 11]}\n{\"hash_ids\": [10, 12, 11]}\n");
  RecordingPolicy policy(2);
  SimStats stats = Simulate(trace, 2, policy);
  // R2: 0 hits (then touched); 2 misses: the cache is full, so evict the LRU
  // block (1) and insert 2 with parent 0; 1 then misses, evict 0, insert 1
  // with parent 2 (the previous block of the request, cached or not). A
  // request's last block ends its write ($).
  EXPECT_EQ(policy.log, "I0/-/1 I1/0/1$ A0 E1 I2/0/1 E0 I1/2/1$ ");
  EXPECT_EQ(stats.hit_blocks, 1u);
  EXPECT_EQ(policy.Count(), 2u);
}

TEST(SimulatorTest, ReportsProgress) {
  Trace trace = MustParse(testing::RandomTraceText(3, 200));
  auto policy = MakeSimPolicy(trace, "lru", cache::PolicyOptions{.capacity = 50});
  ASSERT_TRUE(policy.ok());
  uint64_t last = 0;
  Simulate(trace, 50, **policy, [&](uint64_t done) { last = done; });
  EXPECT_EQ(last, trace.block_refs());
}

TEST(SimulatorTest, HitRatioIsARatioForEveryPolicy) {
  Trace trace = MustParse(testing::RandomTraceText(11, 400));
  for (const std::string& name : SimPolicyNames()) {
    for (uint64_t cap : {uint64_t{1}, uint64_t{10}, uint64_t{100}, trace.distinct_blocks()}) {
      SimStats stats = RunPolicy(trace, name, cap);
      EXPECT_EQ(stats.block_refs, trace.block_refs()) << name;
      EXPECT_LE(stats.hit_blocks, stats.block_refs) << name;
      EXPECT_GE(stats.hit_ratio(), 0.0) << name;
      EXPECT_LE(stats.hit_ratio(), 1.0) << name;
    }
  }
}

TEST(SimulatorTest, LruHitsNeverDropAsCapacityGrows) {
  // LRU is a stack algorithm: the cache of size c is always a subset of the
  // cache of size c + 1, so every prefix hit at c is one at c + 1 too.
  for (uint32_t seed : {1u, 2u, 3u}) {
    Trace trace = MustParse(testing::RandomTraceText(seed, 300));
    uint64_t previous = 0;
    for (uint64_t cap = 1; cap <= trace.distinct_blocks(); cap += 7) {
      SimStats stats = RunPolicy(trace, "lru", cap);
      EXPECT_GE(stats.hit_blocks, previous) << "seed " << seed << " capacity " << cap;
      previous = stats.hit_blocks;
    }
  }
}

TEST(SimulatorTest, SimPolicyNamesEndWithBelady) {
  std::vector<std::string> names = SimPolicyNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "belady");
  for (const char* expected : {"fifo", "lru", "sieve", "s3fifo", "prefix-lru"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
}

TEST(SimulatorTest, UnknownPolicyListsTheValidNames) {
  Trace trace = MustParse("{\"hash_ids\": [1]}\n");
  auto policy = MakeSimPolicy(trace, "mru", cache::PolicyOptions{.capacity = 1});
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(policy.status().message().find("'mru'"), std::string::npos);
  EXPECT_NE(policy.status().message().find("lru"), std::string::npos);
  EXPECT_NE(policy.status().message().find("belady"), std::string::npos);
}

}  // namespace
}  // namespace crescent::sim
