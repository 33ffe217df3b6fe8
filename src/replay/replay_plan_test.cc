#include "replay/replay_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/session_hints.h"

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

// Request 1 is extended by request 2 (it starts with 7, 8); requests 2 and
// 3 are last turns. The plan marks exactly the simulator's draw.
TEST(ReplayPlan, SessionHintsMarkTheSimulatorsDraw) {
  const sim::Trace trace = Parse(kTrace);
  auto none = BuildPlan(trace, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->hinted_requests, 0u);
  for (const auto& r : none->requests) EXPECT_FALSE(r.ends_session);
  auto all = BuildPlan(trace, {.session_hints = 1});
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->requests[0].ends_session);
  EXPECT_TRUE(all->requests[1].ends_session);
  EXPECT_TRUE(all->requests[2].ends_session);
  EXPECT_EQ(all->hinted_requests, 2u);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    auto half = BuildPlan(trace, {.session_hints = 0.5, .seed = seed});
    ASSERT_TRUE(half.ok());
    const std::vector<bool> drawn = sim::SessionHints(trace, 0.5, seed);
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(half->requests[r].ends_session, drawn[r]) << seed;
  }
}

TEST(ReplayPlan, RejectsBadOptions) {
  EXPECT_EQ(BuildPlan(Parse(kTrace), {.speed = 0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(BuildPlan(Parse(kTrace), {.key_prefix = ""}).status().code(),
            ErrorCode::kInvalidArgument);
  for (double f : {-0.1, 1.5, std::nan("")}) {
    EXPECT_EQ(BuildPlan(Parse(kTrace), {.session_hints = f}).status().code(),
              ErrorCode::kInvalidArgument)
        << f;
  }
}

}  // namespace
}  // namespace crescent::replay
