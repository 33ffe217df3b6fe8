// Client reads under a short read lease (lease_ms = 400): a get inside the
// lease works end to end (its capability is valid for the lease), and once the
// lease has run out the object is removable without force again. Capability
// expiry itself is enforced by the transports and tested there. And readers
// on the default leases do not starve a writer of space.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client/client_test_util.h"

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

// A segment of exactly 64 objects of 64 KiB, the master on its defaults.
class ClientReadersWriterTest : public ClientClusterTest {
 protected:
  server::LocalClusterOptions Options() override {
    server::LocalClusterOptions o = SmallCluster(1, GetParam());
    o.segment_size = 64 * (64 << 10);
    return o;
  }
};

// Readers must not starve writers, in real time: two reader threads poll the
// two newest keys while a writer puts new ones into a segment of 64 objects,
// on the master's default leases. The writer is paced like a user's `crescent
// put` (a put, then 50 ms); a busy machine only slows it, which gives eviction
// more time. Under the former 10 s leases every object was read within its
// lease, so every put after the first 64 failed with NO_SPACE; with 100 puts
// (5 s, the last 36 each needing an eviction) that holds of any lease longer
// than about 62 paces (3 s).
TEST_P(ClientReadersWriterTest, TwoReadersPollingNewKeysDoNotStarveAWriter) {
  constexpr size_t kObject = 64 << 10;
  constexpr int kPuts = 100;
  std::atomic<int> newest{-1};
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  auto reader = [&](int offset) {
    while (!done.load()) {
      const int k = newest.load() - offset;
      if (k >= 0 && client_->Get("rw" + std::to_string(k)).ok()) reads.fetch_add(1);
      std::this_thread::yield();
    }
  };
  std::thread r1(reader, 0);
  std::thread r2(reader, 1);
  int no_space = 0;
  std::vector<std::byte> value = Pattern(kObject, 7);
  for (int i = 0; i < kPuts; ++i) {
    Status s = client_->Put("rw" + std::to_string(i), Bytes(value));
    if (s.ok()) {
      newest.store(i);
    } else {
      EXPECT_EQ(s.code(), ErrorCode::kNoSpace) << s.ToString();
      ++no_space;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  done.store(true);
  r1.join();
  r2.join();
  EXPECT_GT(reads.load(), kPuts) << "the readers did read";
  EXPECT_EQ(no_space, 0) << no_space << " of " << kPuts << " puts failed";
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientReadersWriterTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
