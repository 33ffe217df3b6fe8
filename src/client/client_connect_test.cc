// Client against a master that is not there: Connect is lazy (it only builds
// the channel), but the first call must fail within the configured attempts
// with kUnavailable and say which address it tried, never hang.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "crescent/client.h"

namespace crescent {
namespace {

TEST(ClientConnectTest, UnknownCongestionControlIsRefusedUpFront) {
  ClientConfig cc;
  cc.master_address = "127.0.0.1:1";
  cc.tcp_congestion = "no-such-cc";
  auto client = Client::Connect(cc);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("tcp_congestion"), std::string::npos);
  EXPECT_NE(client.status().message().find("no-such-cc"), std::string::npos);
  // A name the kernel offers passes the check (Connect may still fail for the
  // absent master, but not because of the option).
  cc.tcp_congestion = "reno";
  auto ok = Client::Connect(cc);
  if (!ok.ok()) {
    EXPECT_NE(ok.status().code(), ErrorCode::kInvalidArgument) << ok.status().ToString();
  }
}

// $CRESCENT_TCP_CONGESTION applies when the config names none (the CLI, the
// Python binding), and is checked like the field; the field wins over it.
TEST(ClientConnectTest, CongestionControlFromTheEnvironment) {
  ClientConfig cc;
  cc.master_address = "127.0.0.1:1";
  setenv("CRESCENT_TCP_CONGESTION", "no-such-cc-env", 1);
  auto refused = Client::Connect(cc);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no-such-cc-env"), std::string::npos);
  cc.tcp_congestion = "reno";  // the field wins
  auto ok = Client::Connect(cc);
  if (!ok.ok()) {
    EXPECT_NE(ok.status().code(), ErrorCode::kInvalidArgument) << ok.status().ToString();
  }
  setenv("CRESCENT_TCP_CONGESTION", "reno", 1);
  cc.tcp_congestion.clear();
  auto from_env = Client::Connect(cc);
  if (!from_env.ok()) {
    EXPECT_NE(from_env.status().code(), ErrorCode::kInvalidArgument)
        << from_env.status().ToString();
  }
  unsetenv("CRESCENT_TCP_CONGESTION");
}

// A transfer timeout of 0 (or less) would expire every put at once; no lane
// would carry anything. Both are refused at Connect, naming the field.
TEST(ClientConnectTest, SettingsThatFailEveryTransferAreRefused) {
  for (int64_t timeout : {int64_t{0}, int64_t{-1}}) {
    ClientConfig cc;
    cc.master_address = "127.0.0.1:1";
    cc.transfer_timeout_ms = timeout;
    auto client = Client::Connect(cc);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(client.status().message().find("transfer_timeout_ms"), std::string::npos);
  }
  ClientConfig cc;
  cc.master_address = "127.0.0.1:1";
  cc.tcp_lanes = 0;
  EXPECT_EQ(Client::Connect(cc).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ClientConnectTest, UnreachableMasterIsUnavailableAndNamesTheAddress) {
  ClientConfig cc;
  cc.master_address = "127.0.0.1:1";  // nothing listens on port 1
  cc.rpc_attempts = 2;
  // A refused connect fails at once; the deadline only has to outlast a slow
  // machine (a TSan CI run under load once took over 1000 ms to see the
  // refusal, and reported DEADLINE_EXCEEDED instead).
  cc.rpc_timeout_ms = 5000;
  cc.put_retry_ms = 200;  // the put tries again, briefly (the default is 5 s)
  auto start = std::chrono::steady_clock::now();
  auto client = Client::Connect(cc);
  if (!client.ok()) {
    // An eager Connect may refuse already; it must say why the same way.
    EXPECT_EQ(client.status().code(), ErrorCode::kUnavailable) << client.status().ToString();
    EXPECT_NE(client.status().message().find("127.0.0.1:1"), std::string::npos);
    return;
  }
  EXPECT_EQ((*client)->master_address(), "127.0.0.1:1");

  StatusOr<bool> ex = (*client)->Exists("k");
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), ErrorCode::kUnavailable) << ex.status().ToString();
  EXPECT_NE(ex.status().message().find("127.0.0.1:1"), std::string::npos) << ex.status().message();

  // The other verbs fail the same way rather than hang or report a miss.
  std::vector<std::byte> v(16);
  Status put = (*client)->Put("k", v);
  EXPECT_EQ(put.code(), ErrorCode::kUnavailable) << put.ToString();
  EXPECT_EQ((*client)->Get("k").status().code(), ErrorCode::kUnavailable);
  std::vector<std::string> keys = {"a", "b"};
  EXPECT_EQ((*client)->BatchQueryPrefix(keys).status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ((*client)->Stat().status().code(), ErrorCode::kUnavailable);
  // Bounded: 5 calls × 2 attempts, each refused at once; allow generous slack.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace crescent
