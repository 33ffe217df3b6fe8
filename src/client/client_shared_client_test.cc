// One Client shared by several threads (the header promises thread safety):
// each thread puts, reads back, checks and removes its own keys, copying and
// zero-copy, while the others do the same. Every result must be correct.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::Pattern;

class ClientSharedTest : public ClientClusterTest {};

TEST_P(ClientSharedTest, FourThreadsOnDisjointKeys) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 40;
  std::atomic<int> failures{0};
  auto fail = [&](const std::string& what) {
    failures.fetch_add(1);
    ADD_FAILURE() << what;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::byte> arena(8192);
      if (!client_->RegisterBuffer(arena.data(), arena.size()).ok()) return fail("register");
      for (int r = 0; r < kRounds; ++r) {
        std::string key = "t" + std::to_string(t) + "/k" + std::to_string(r);
        auto seed = static_cast<uint32_t>(t * 1000 + r);
        std::vector<std::byte> v = Pattern(1 + (r * 997) % 4096, seed);
        if (!client_->Put(key, Bytes(v)).ok()) return fail("put " + key);
        StatusOr<bool> ex = client_->Exists(key);
        if (!ex.ok() || !*ex) return fail("exists " + key);
        StatusOr<std::vector<std::byte>> got = client_->Get(key);
        if (!got.ok() || *got != v) return fail("get " + key);
        StatusOr<size_t> n = client_->GetInto(key, arena.data(), arena.size());
        if (!n.ok() || *n != v.size() || std::memcmp(arena.data(), v.data(), v.size()) != 0) {
          return fail("get-into " + key);
        }
        std::string zkey = key + "/zc";
        if (!client_->PutFrom(zkey, arena.data(), v.size()).ok()) return fail("put-from " + zkey);
        // Both were read (leased): force the removes.
        if (!client_->Remove(key, true).ok()) return fail("remove " + key);
        ex = client_->Exists(key);
        if (!ex.ok() || *ex) return fail("exists after remove " + key);
        got = client_->Get(zkey);
        if (!got.ok() || *got != v) return fail("get " + zkey);
        if (!client_->Remove(zkey, true).ok()) return fail("remove " + zkey);
      }
      if (!client_->UnregisterBuffer(arena.data()).ok()) fail("unregister");
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->objects, 0u);
  EXPECT_EQ(st->pending_puts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientSharedTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
