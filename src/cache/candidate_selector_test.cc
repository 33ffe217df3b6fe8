#include "cache/candidate_selector.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace crescent::cache {
namespace {

using Selector = CandidateSelector;

TEST(CandidateSelectorTest, MovesToAClearlyBetterCandidateAfterWarmupAndConfirmation) {
  Selector s(2, 0);
  int windows = 0;
  while (!s.Update(std::vector<double>{0.30, 0.40}, true)) {
    ASSERT_LT(++windows, 100);
  }
  EXPECT_EQ(s.followed(), 1u);
  // Warm-up, then the lead must hold for the confirmation windows.
  EXPECT_EQ(windows + 1, Selector::kWarmupWindows + Selector::kConfirmWindows);
}

TEST(CandidateSelectorTest, NeverMovesOnALeadWithinTheMargin) {
  Selector s(2, 0);
  for (int i = 0; i < 500; ++i) {
    EXPECT_FALSE(s.Update(std::vector<double>{0.300, 0.303}, true));
  }
  EXPECT_EQ(s.followed(), 0u);
}

TEST(CandidateSelectorTest, NoiseWithoutALeadRarelyMovesIt) {
  // Two equally good candidates whose windows differ a lot, at random (a
  // standard deviation of a sixth of the ratio): the margin alone would let
  // the live cache follow the noise every few dozen windows.
  Selector s(2, 0);
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, 0.05);
  int moves = 0;
  for (int i = 0; i < 2000; ++i) {
    moves += s.Update(std::vector<double>{0.3 + noise(rng), 0.3 + noise(rng)}, true);
  }
  EXPECT_LE(moves, 4);
}

TEST(CandidateSelectorTest, WaitsUntilAMoveMayStart) {
  Selector s(2, 0);
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(s.Update(std::vector<double>{0.3, 0.5}, false));
  EXPECT_TRUE(s.Update(std::vector<double>{0.3, 0.5}, true));
  EXPECT_EQ(s.followed(), 1u);
}

TEST(CandidateSelectorTest, LeadsRestartAfterAMove) {
  Selector s(3, 0);
  while (!s.Update(std::vector<double>{0.3, 0.5, 0.4}, true)) {
  }
  EXPECT_EQ(s.followed(), 1u);
  EXPECT_EQ(s.lead(1), 0.0);
  EXPECT_EQ(s.lead(2), 0.0);
  s.Update(std::vector<double>{0.3, 0.5, 0.4}, true);
  EXPECT_NEAR(s.lead(2), -0.1, 1e-9);
  EXPECT_NEAR(s.followed_ratio(), 0.5, 1e-9);
}

}  // namespace
}  // namespace crescent::cache
