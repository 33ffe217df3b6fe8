#include "common/listen_check.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace crescent {
namespace {

// A listening IPv4 loopback socket on a port the kernel picks.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd_, 4) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  ~Listener() {
    if (fd_ >= 0) close(fd_);
  }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(ListenCheckTest, ABusyPortSaysWhy) {
  Listener busy;
  ASSERT_NE(busy.port(), 0);
  Status s = CheckCanListen("test server", "127.0.0.1", busy.port());
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  const std::string where = "127.0.0.1:" + std::to_string(busy.port());
  EXPECT_EQ(s.message(), "test server cannot listen on " + where + ": Address already in use");
  // Every address, the port included.
  EXPECT_EQ(CheckCanListen("test server", "0.0.0.0", busy.port()).code(), ErrorCode::kUnavailable);
}

TEST(ListenCheckTest, AFreeOrAnyPortPasses) {
  uint16_t port;
  {
    Listener was;
    port = was.port();
    ASSERT_NE(port, 0);
  }  // closed: free again (no connection ever made, so no TIME_WAIT either)
  EXPECT_TRUE(CheckCanListen("s", "127.0.0.1", port).ok());
  EXPECT_TRUE(CheckCanListen("s", "127.0.0.1", 0).ok());
}

TEST(ListenCheckTest, AHostThatDoesNotResolveIsRefused) {
  Status s = CheckCanListen("s", "no-such-host.invalid", 4000);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("no-such-host.invalid:4000"), std::string::npos) << s.ToString();
}

// Port 0 (any port) still checks the address: gRPC would only log why it
// cannot listen there.
TEST(ListenCheckTest, AnyPortStillChecksTheAddress) {
  Status s = CheckCanListen("s", "no-such-host.invalid", 0);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.ToString();
  s = CheckCanListen("s", "192.0.2.1", 0);  // TEST-NET-1: no local interface has it
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("Cannot assign requested address"), std::string::npos);
}

TEST(ListenCheckTest, HostPortStringsAreSplitAndOtherFormsLeftAlone) {
  Listener busy;
  ASSERT_NE(busy.port(), 0);
  const std::string where = "127.0.0.1:" + std::to_string(busy.port());
  Status s = CheckCanListenOn("s", where);
  EXPECT_EQ(s.message(), "s cannot listen on " + where + ": Address already in use");
  EXPECT_EQ(CheckCanListenOn("s", "no-such-host.invalid:0").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(CheckCanListenOn("s", "127.0.0.1:0").ok());
  EXPECT_TRUE(CheckCanListenOn("s", "unix:/some/path").ok());  // not HOST:PORT: gRPC's
  EXPECT_TRUE(CheckCanListenOn("s", "::1").ok());
}

TEST(ListenCheckTest, UnixSocketPathsSayWhy) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "crescent_listen_check_" + std::to_string(getpid());
  EXPECT_TRUE(CheckCanListenUnix("s", path).ok());
  EXPECT_NE(access(path.c_str(), F_OK), 0);  // removed again
  Status s = CheckCanListenUnix("s", "/nonexistent-dir/sock");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.ToString();
  s = CheckCanListenUnix("s", "/tmp/" + std::string(120, 'x'));
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("the path is 125 bytes; a Unix socket path takes 1 to 107"),
            std::string::npos)
      << s.ToString();
}

TEST(IsLoopbackHostTest, OnlyLoopbackAddressesAre) {
  for (const char* h :
       {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  }
  for (const char* h : {"0.0.0.0", "::", "[::]", "10.0.0.1", "128.0.0.1", "::2", "::ffff:10.0.0.1",
                        "example.com", "", "127.0.0.1:80", "localhost.evil"}) {
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
  }
}

}  // namespace
}  // namespace crescent
