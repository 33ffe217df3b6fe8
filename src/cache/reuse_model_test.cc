#include "cache/reuse_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "cache/hash_mix.h"

namespace crescent::cache {
namespace {

constexpr uint64_t kObjects = 64;  // the horizon is 4 × 64 = 256 references

// Class 1's keys come back after 20 references; class 0's never do.
uint64_t Drive(ReuseModel& model, uint64_t now, int rounds) {
  uint64_t fresh = 1'000'000 + now;
  for (int r = 0; r < rounds; ++r) {
    for (uint64_t k = 0; k < 20; ++k) model.Observe(MixBits(k), 1, now++);
    model.Observe(MixBits(fresh++), 0, now++);
    if (now % kObjects == 0) model.Learn(kObjects, now);
  }
  return now;
}

TEST(ReuseModelTest, AReusedClassIsDenserThanANeverReusedOne) {
  ReuseModel model(kReused);
  const uint64_t now = Drive(model, 0, 400);
  model.Learn(kObjects, now);
  EXPECT_EQ(model.unit(), 4 * kObjects / ReuseModel::kAges);
  EXPECT_GT(model.Density(1, 0), 0.0);
  EXPECT_GT(model.Density(1, 0), 10 * model.Density(0, 0));
  // No class-1 key is ever older than 21 references when reused: past that age
  // there is nothing left to hit.
  EXPECT_EQ(model.Density(1, 40), 0.0);
}

// Before any lifetime has reached the horizon, the keys not reused yet count
// as lifetimes that end at their age: a class of which one key in ten comes
// back soon is not taken for denser than one whose every key comes back later.
TEST(ReuseModelTest, BeforeTheHorizonTheKeysNotReusedYetCount) {
  ReuseModel model(kReused);
  model.Learn(kObjects, 0);  // horizon 256
  // (time, key, class) of each reference.
  std::vector<std::tuple<uint64_t, uint64_t, uint8_t>> refs;
  for (uint64_t i = 0; i < 100; ++i) {
    refs.emplace_back(i, i, 0);
    if (i % 10 == 0) refs.emplace_back(i + 4, i, 0);  // one in ten, 4 references later
  }
  for (uint64_t j = 0; j < 10; ++j) {
    refs.emplace_back(110 + j, 1000 + j, 1);
    refs.emplace_back(130 + j, 1000 + j, 1);  // every one, 20 references later
  }
  std::sort(refs.begin(), refs.end());
  for (const auto& [time, key, cls] : refs) model.Observe(MixBits(key), cls, time);
  model.Learn(kObjects, 200);
  EXPECT_GT(model.Density(1, 0), model.Density(0, 0));
}

TEST(ReuseModelTest, AClassThatChangesIsRelearned) {
  ReuseModel model(kReused);
  uint64_t now = Drive(model, 0, 400);
  model.Learn(kObjects, now);
  ASSERT_GT(model.Density(1, 0), 10 * model.Density(0, 0));
  // Now class 1's keys are never seen again and class 0's come back.
  uint64_t fresh = 5'000'000;
  for (int r = 0; r < 3000; ++r) {
    model.Observe(MixBits(fresh++), 1, now++);
    model.Observe(MixBits(r % 20 + 100), 0, now++);
    if (now % kObjects == 0) model.Learn(kObjects, now);
  }
  EXPECT_GT(model.Density(0, 0), 10 * model.Density(1, 0));
}

TEST(ReuseModelTest, AReuseBeyondTheHorizonIsAnEndedLifetime) {
  ReuseModel model(kReused);
  model.Learn(kObjects, 0);  // horizon 256
  uint64_t now = 0;
  for (int r = 0; r < 200; ++r) {
    model.Observe(MixBits(r), 1, now);
    now += 300;  // every key comes back too late
    model.Observe(MixBits(r), 1, now++);
  }
  model.Learn(kObjects, now);
  EXPECT_EQ(model.Density(1, 0), 0.0);
}

TEST(ReuseModelTest, SamplingKeepsTheTrackedSetBounded) {
  ReuseModel model(kReused);
  model.Learn(1 << 20, 0);  // a huge horizon: nothing expires
  uint64_t now = 0;
  for (uint64_t k = 0; k < 3 * ReuseModel::kMaxTracked; ++k) model.Observe(MixBits(k), 0, now++);
  EXPECT_LE(model.tracked(), ReuseModel::kMaxTracked);
  EXPECT_LT(model.sample_rate(), 0.5);
}

TEST(ReuseModelTest, AdoptedStatisticsGiveTheSameDensities) {
  ReuseModel teacher(kReused);
  const uint64_t now = Drive(teacher, 0, 400);
  teacher.Learn(kObjects, now);
  ReuseModel student(kReused);
  student.Learn(kObjects, 0);
  student.AdoptStatistics(teacher);
  for (uint64_t age : {0, 10, 30}) {
    EXPECT_EQ(student.Density(1, age), teacher.Density(1, age)) << age;
    EXPECT_EQ(student.Density(0, age), teacher.Density(0, age)) << age;
  }
}

}  // namespace
}  // namespace crescent::cache
