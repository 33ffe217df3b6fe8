// Client reads under a short read lease (lease_ms = 400): a get inside the
// lease works end to end (its capability is valid for the lease), and once the
// lease has run out the object is removable without force again. Capability
// expiry itself is enforced by the transports and tested there.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "server/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::Pattern;
using client_test::SmallCluster;

class ClientLeaseTest : public ClientClusterTest {
 protected:
  server::LocalClusterOptions Options() override {
    server::LocalClusterOptions o = SmallCluster(1, GetParam());
    o.master.config.lease_ms = 400;
    return o;
  }
};

TEST_P(ClientLeaseTest, GetWorksUnderShortLeaseAndLeaseExpires) {
  std::vector<std::byte> value = Pattern(size_t{1} << 20, 41);
  ASSERT_TRUE(client_->Put("short", Bytes(value)).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("short");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  EXPECT_EQ(client_->Remove("short").code(), ErrorCode::kObjectLeased);

  // Each get takes a fresh lease: repeated reads keep working past the first
  // lease's end.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  got = client_->Get("short");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);

  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(client_->Remove("short").ok());
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientLeaseTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
