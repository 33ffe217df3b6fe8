#include "transfer/poll_window.h"

#include <gtest/gtest.h>

namespace crescent::transfer {
namespace {

using Us = PollWindow::Us;

TEST(PollWindow, StartsAtBase) {
  PollWindow w(Us(200), Us(1000));
  EXPECT_EQ(w.window(), Us(200));
}

TEST(PollWindow, StretchesToCoverTheGapsItSleptThrough) {
  PollWindow w(Us(200), Us(1000));
  w.AfterSleep(Us(300));  // a 4 MiB copy between calls
  EXPECT_EQ(w.window(), Us(450));
  w.AfterSleep(Us(600));
  EXPECT_EQ(w.window(), Us(900));
}

TEST(PollWindow, NeverBelowBaseNorAboveMax) {
  PollWindow w(Us(200), Us(1000));
  w.AfterSleep(Us(10));  // woken soon after its last work: keeps the base
  EXPECT_EQ(w.window(), Us(200));
  w.AfterSleep(Us(900));  // 1.5 × 900 = 1350, capped
  EXPECT_EQ(w.window(), Us(1000));
  w.AfterSleep(Us(1000));  // a gap of exactly max still stretches
  EXPECT_EQ(w.window(), Us(1000));
}

TEST(PollWindow, AQuietClientSetsItBack) {
  PollWindow w(Us(200), Us(1000));
  w.AfterSleep(Us(400));
  ASSERT_EQ(w.window(), Us(600));
  w.AfterSleep(Us(1001));  // longer than max: the client went quiet
  EXPECT_EQ(w.window(), Us(200));
  w.AfterSleep(Us(50'000));
  EXPECT_EQ(w.window(), Us(200));
}

TEST(PollWindow, MaxBelowBaseIsAFixedWindow) {
  PollWindow w(Us(200), Us(0));
  w.AfterSleep(Us(150));
  EXPECT_EQ(w.window(), Us(200));
  w.AfterSleep(Us(5000));
  EXPECT_EQ(w.window(), Us(200));
}

TEST(PollWindow, ZeroNeverPolls) {
  PollWindow w(Us(0), Us(0));
  w.AfterSleep(Us(100));
  EXPECT_EQ(w.window(), Us(0));
  PollWindow negative(Us(-5), Us(-5));
  EXPECT_EQ(negative.window(), Us(0));
}

}  // namespace
}  // namespace crescent::transfer
