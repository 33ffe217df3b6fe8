#include "crescent/status.h"

#include <gtest/gtest.h>

namespace crescent {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeAndMessage) {
  Status s(ErrorCode::kObjectNotFound, "key 'a'");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s == ErrorCode::kObjectNotFound);
  EXPECT_EQ(s.ToString(), "OBJECT_NOT_FOUND: key 'a'");
}

TEST(StatusTest, CodeNumbersAreStable) {
  // These numbers are on the wire and in the Python binding: never renumber.
  EXPECT_EQ(static_cast<int>(ErrorCode::kObjectAlreadyExists), 5);
  EXPECT_EQ(static_cast<int>(ErrorCode::kNoSpace), 8);
  EXPECT_EQ(static_cast<int>(ErrorCode::kClosed), 25);
  EXPECT_EQ(static_cast<int>(ErrorCode::kChecksumMismatch), 26);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kChecksumMismatch), "CHECKSUM_MISMATCH");
  EXPECT_EQ(static_cast<int>(ErrorCode::kUnauthenticated), 27);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kUnauthenticated), "UNAUTHENTICATED");
}

TEST(StatusOrTest, HoldsValueOrStatus) {
  StatusOr<int> v(42);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 42);
  StatusOr<int> e(ErrorCode::kNoSpace, "full");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), ErrorCode::kNoSpace);
}

}  // namespace
}  // namespace crescent
