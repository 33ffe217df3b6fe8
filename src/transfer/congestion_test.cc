// TCP congestion control of data connections: set and read back on a real
// socket, and refused with a clear message when the kernel has no such
// algorithm. "reno" is built into every Linux kernel and always allowed.
#include "transfer/congestion.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace crescent::transfer {
namespace {

std::string Current(int fd) {
  char name[16] = {};
  socklen_t len = sizeof(name);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "?";
  return std::string(name, strnlen(name, sizeof(name)));
}

TEST(CongestionTest, SetsTheNamedAlgorithmOnTheSocket) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  Status s = SetCongestionControl(fd, "reno");
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Current(fd), "reno");
  ::close(fd);
  EXPECT_TRUE(CheckCongestionControl("reno").ok());
}

TEST(CongestionTest, EmptyLeavesTheSystemDefault) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  std::string before = Current(fd);
  EXPECT_TRUE(SetCongestionControl(fd, "").ok());
  EXPECT_EQ(Current(fd), before);
  ::close(fd);
  EXPECT_TRUE(CheckCongestionControl("").ok());
}

TEST(CongestionTest, UnknownOrOverlongNamesAreRefusedByName) {
  Status s = CheckCongestionControl("no-such-cc");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'no-such-cc'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not available"), std::string::npos) << s.message();
  s = CheckCongestionControl(std::string(40, 'x'));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 15"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace crescent::transfer
