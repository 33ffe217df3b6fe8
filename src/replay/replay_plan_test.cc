#include "replay/replay_plan.h"

#include <gtest/gtest.h>

namespace crescent::replay {
namespace {

sim::Trace Parse(const std::string& text) {
  auto t = sim::ParseTrace(text, "test");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

const char* kTrace =
    "{\"timestamp\": 100, \"hash_ids\": [7, 8, 9]}\n"
    "{\"timestamp\": 300, \"hash_ids\": [7, 8, 10, 11]}\n"
    "{\"timestamp\": 250, \"hash_ids\": [12]}\n";

TEST(ReplayPlan, KeysFollowHashIdsInOrder) {
  auto plan = BuildPlan(Parse(kTrace), {.key_prefix = "p"});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->requests.size(), 3u);
  EXPECT_EQ(plan->requests[1].keys,
            (std::vector<std::string>{"p-7", "p-8", "p-10", "p-11"}));
  EXPECT_EQ(plan->requests[1].hash_ids, (std::vector<uint64_t>{7, 8, 10, 11}));
  EXPECT_EQ(plan->requests[2].line, 3u);
  EXPECT_EQ(plan->page_refs, 8u);
  EXPECT_EQ(plan->distinct_pages, 6u);
  EXPECT_EQ(plan->max_request_pages, 4u);
}

TEST(ReplayPlan, ReleaseTimesScaleBySpeedAndNeverGoBack) {
  auto plan = BuildPlan(Parse(kTrace), {.speed = 2.0});
  ASSERT_TRUE(plan.ok());
  EXPECT_DOUBLE_EQ(plan->requests[0].release_ms, 0);
  EXPECT_DOUBLE_EQ(plan->requests[1].release_ms, 100);
  EXPECT_DOUBLE_EQ(plan->requests[2].release_ms, 100);  // 250 < 300: clamped
}

TEST(ReplayPlan, MaxRateReleasesEverythingAtOnce) {
  auto plan = BuildPlan(Parse(kTrace), {.max_rate = true});
  ASSERT_TRUE(plan.ok());
  for (const auto& r : plan->requests) EXPECT_DOUBLE_EQ(r.release_ms, 0);
}

TEST(ReplayPlan, LimitKeepsTheFirstRequests) {
  auto plan = BuildPlan(Parse(kTrace), {.limit = 1});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->requests.size(), 1u);
  EXPECT_EQ(plan->page_refs, 3u);
  EXPECT_EQ(plan->distinct_pages, 3u);
}

TEST(ReplayPlan, RejectsBadOptions) {
  EXPECT_EQ(BuildPlan(Parse(kTrace), {.speed = 0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(BuildPlan(Parse(kTrace), {.key_prefix = ""}).status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace crescent::replay
