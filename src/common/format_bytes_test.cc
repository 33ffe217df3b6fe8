#include "common/format_bytes.h"

#include <gtest/gtest.h>

namespace crescent {
namespace {

TEST(FormatBytes, WholeAndHalfUnitsWithOneDecimal) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(uint64_t{64} << 20), "64.0 MiB");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(FormatBytes(uint64_t{5} << 40), "5.0 TiB");
  EXPECT_EQ(FormatBytes(uint64_t{2048} << 40), "2048.0 TiB");
}

// A count that is not a whole or half unit is never rounded to one: the
// largest unit that holds it exactly, else the bytes.
TEST(FormatBytes, ACountNoUnitHoldsIsPrintedExactly) {
  EXPECT_EQ(FormatBytes(4095), "4095 B");
  EXPECT_EQ(FormatBytes(4097), "4097 B");
  EXPECT_EQ(FormatBytes(1280 << 10), "1280.0 KiB");  // 1.25 MiB
  EXPECT_EQ(FormatBytes((uint64_t{1} << 30) - 512), "1048575.5 KiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "18446744073709551615 B");
  EXPECT_EQ(FormatBytes(UINT64_MAX - 511), "18014398509481983.5 KiB");
}

TEST(FormatBytes, LabelsHaveNoSpaceAndNoPointZero) {
  EXPECT_EQ(FormatBytes(64 << 10, BytesStyle::kLabel), "64KiB");
  EXPECT_EQ(FormatBytes(3 << 19, BytesStyle::kLabel), "1.5MiB");
  EXPECT_EQ(FormatBytes(100, BytesStyle::kLabel), "100B");
  EXPECT_EQ(FormatBytes(4095, BytesStyle::kLabel), "4095B");
}

}  // namespace
}  // namespace crescent
