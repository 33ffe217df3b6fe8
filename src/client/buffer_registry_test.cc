// BufferRegistry: the zero-copy calls' guard. Ranges are accepted only when they
// lie wholly inside one registered region; regions never overlap.
#include "client/buffer_registry.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace crescent::client {
namespace {

TEST(BufferRegistryTest, CheckAcceptsOnlyRangesInsideOneRegion) {
  std::vector<std::byte> mem(1000);
  std::byte* p = mem.data();
  BufferRegistry r;
  EXPECT_EQ(r.Check(p, 1).code(), ErrorCode::kBufferNotRegistered);
  ASSERT_TRUE(r.Register(p + 100, 100).ok());
  EXPECT_TRUE(r.Check(p + 100, 100).ok());
  EXPECT_TRUE(r.Check(p + 150, 50).ok());
  EXPECT_TRUE(r.Check(p + 199, 1).ok());
  EXPECT_TRUE(r.Check(p + 120, 0).ok());
  // A size that wraps the address space is malformed, not merely unregistered.
  EXPECT_EQ(r.Check(p + 150, SIZE_MAX).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Check(p + 99, 2).code(), ErrorCode::kBufferNotRegistered);    // starts before
  EXPECT_EQ(r.Check(p + 150, 51).code(), ErrorCode::kBufferNotRegistered);  // runs past end
  EXPECT_EQ(r.Check(p + 200, 1).code(), ErrorCode::kBufferNotRegistered);   // just after
  EXPECT_EQ(r.Check(nullptr, 1).code(), ErrorCode::kInvalidArgument);
}

// Two adjacent regions are two regions: a range spanning both is refused,
// because a transfer must stay within what one registration vouched for.
TEST(BufferRegistryTest, RangeSpanningTwoAdjacentRegionsIsRefused) {
  std::vector<std::byte> mem(256);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), 128).ok());
  ASSERT_TRUE(r.Register(mem.data() + 128, 128).ok());
  EXPECT_TRUE(r.Check(mem.data() + 100, 28).ok());
  EXPECT_TRUE(r.Check(mem.data() + 128, 28).ok());
  EXPECT_EQ(r.Check(mem.data() + 100, 56).code(), ErrorCode::kBufferNotRegistered);
}

TEST(BufferRegistryTest, OverlapsAreRefusedInEveryPosition) {
  std::vector<std::byte> mem(1000);
  std::byte* p = mem.data();
  BufferRegistry r;
  ASSERT_TRUE(r.Register(p + 100, 100).ok());
  EXPECT_EQ(r.Register(p + 100, 100).code(), ErrorCode::kInvalidArgument);  // same
  EXPECT_EQ(r.Register(p + 50, 51).code(), ErrorCode::kInvalidArgument);    // tail overlaps
  EXPECT_EQ(r.Register(p + 199, 10).code(), ErrorCode::kInvalidArgument);   // head overlaps
  EXPECT_EQ(r.Register(p + 120, 10).code(), ErrorCode::kInvalidArgument);   // inside
  EXPECT_EQ(r.Register(p, 500).code(), ErrorCode::kInvalidArgument);        // covers
  EXPECT_TRUE(r.Register(p + 50, 50).ok());                                 // touches before
  EXPECT_TRUE(r.Register(p + 200, 50).ok());                                // touches after
}

TEST(BufferRegistryTest, RegisterRejectsNullAndEmpty) {
  std::vector<std::byte> mem(8);
  BufferRegistry r;
  EXPECT_EQ(r.Register(nullptr, 8).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Register(mem.data(), 0).code(), ErrorCode::kInvalidArgument);
}

TEST(BufferRegistryTest, UnregisterByStartAddressOnly) {
  std::vector<std::byte> mem(100);
  BufferRegistry r;
  ASSERT_TRUE(r.Register(mem.data(), 100).ok());
  EXPECT_EQ(r.Unregister(mem.data() + 1).code(), ErrorCode::kBufferNotRegistered);
  EXPECT_TRUE(r.Check(mem.data(), 100).ok());
  EXPECT_TRUE(r.Unregister(mem.data()).ok());
  EXPECT_EQ(r.Check(mem.data(), 100).code(), ErrorCode::kBufferNotRegistered);
  EXPECT_EQ(r.Unregister(mem.data()).code(), ErrorCode::kBufferNotRegistered);
  // The space is free again.
  EXPECT_TRUE(r.Register(mem.data() + 10, 20).ok());
}

}  // namespace
}  // namespace crescent::client
