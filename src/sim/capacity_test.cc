#include "sim/capacity.h"

#include <gtest/gtest.h>

namespace crescent::sim {
namespace {

uint64_t Blocks(std::string_view spec, uint64_t distinct) {
  auto cap = ParseCapacity(spec, distinct);
  EXPECT_TRUE(cap.ok()) << spec << ": " << cap.status().ToString();
  return cap.ok() ? cap->blocks : 0;
}

TEST(CapacityTest, BlockCounts) {
  EXPECT_EQ(Blocks("1", 100), 1u);
  EXPECT_EQ(Blocks("4096", 5000), 4096u);
  EXPECT_EQ(Blocks(" 100 ", 100), 100u);  // all of them is allowed
}

TEST(CapacityTest, PercentagesFloorExactly) {
  // The Mooncake synthetic trace's 43924 distinct blocks (README.md, "The hit ratio").
  EXPECT_EQ(Blocks("5%", 43924), 2196u);   // 2196.2
  EXPECT_EQ(Blocks("10%", 43924), 4392u);  // 4392.4
  EXPECT_EQ(Blocks("100%", 43924), 43924u);
  EXPECT_EQ(Blocks("2.5%", 1000), 25u);
  EXPECT_EQ(Blocks("0.5%", 1000), 5u);
  EXPECT_EQ(Blocks(".5%", 1000), 5u);
  EXPECT_EQ(Blocks("33.3334%", 3), 1u);  // 1.000002 blocks
  EXPECT_EQ(Blocks("7%", 100), 7u);      // exact: 7 * 100 / 100, no 6.9999 rounding down
  EXPECT_EQ(Blocks("29%", 100), 29u);
  EXPECT_EQ(Blocks("12.5 %", 80), 10u);
}

TEST(CapacityTest, Labels) {
  auto cap = ParseCapacity(" 5% ", 1000);
  ASSERT_TRUE(cap.ok());
  EXPECT_EQ(cap->label, "5%");
}

TEST(CapacityTest, Lists) {
  auto caps = ParseCapacities("5%,10%, 300", 1000);
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  ASSERT_EQ(caps->size(), 3u);
  EXPECT_EQ((*caps)[0].blocks, 50u);
  EXPECT_EQ((*caps)[1].blocks, 100u);
  EXPECT_EQ((*caps)[2].blocks, 300u);
  EXPECT_EQ((*caps)[2].label, "300");
}

class CapacityErrorTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(CapacityErrorTest, IsAClearError) {
  const auto& [spec, fragment] = GetParam();
  auto caps = ParseCapacities(spec, 1000);
  ASSERT_FALSE(caps.ok()) << spec;
  EXPECT_EQ(caps.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(caps.status().message().find(fragment), std::string::npos) << caps.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Bad, CapacityErrorTest,
    ::testing::Values(std::pair<std::string, std::string>{"0", "must be positive"},
                      std::pair<std::string, std::string>{"0%", "must be positive"},
                      std::pair<std::string, std::string>{"-5", "must be positive"},
                      std::pair<std::string, std::string>{"-5%", "must be positive"},
                      std::pair<std::string, std::string>{"abc", "expected a positive"},
                      std::pair<std::string, std::string>{"5%%", "expected a positive"},
                      std::pair<std::string, std::string>{"1.5", "expected a positive"},
                      std::pair<std::string, std::string>{"1e3", "expected a positive"},
                      std::pair<std::string, std::string>{"%", "expected a positive"},
                      std::pair<std::string, std::string>{"", "empty"},
                      std::pair<std::string, std::string>{"5%,,10%", "empty"},
                      std::pair<std::string, std::string>{"5%,", "empty"},
                      std::pair<std::string, std::string>{"0.01%", "is 0 blocks"},
                      std::pair<std::string, std::string>{"1001", "exceeds the 1000"},
                      std::pair<std::string, std::string>{"100.1%", "exceeds the 1000"},
                      std::pair<std::string, std::string>{"5%,250%", "'250%'"},
                      std::pair<std::string, std::string>{"99999999999999999999", "expected"}));

}  // namespace
}  // namespace crescent::sim
