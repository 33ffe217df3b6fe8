// Helpers for the client behaviour tests: an in-process LocalCluster (real gRPC,
// TCP and shared memory) plus a crescent::Client connected to it, and
// deterministic byte patterns so a round trip can be compared byte for byte.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "crescent/client.h"
#include "server/local_cluster.h"

namespace crescent::client_test {

// A pattern that differs per seed and per position, so a swapped, shifted or
// truncated value never compares equal by accident.
inline std::vector<std::byte> Pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<std::byte>(x);
  }
  return out;
}

inline std::span<const std::byte> Bytes(const std::vector<std::byte>& v) { return {v}; }

// Client::BatchExists as one answer per key: 1 stored, 0 not, or the negated
// error code of a key that could not be answered.
inline std::vector<int> Present(const std::vector<StatusOr<bool>>& r) {
  std::vector<int> out;
  for (const StatusOr<bool>& p : r) {
    out.push_back(p.ok() ? int{*p} : -static_cast<int>(p.status().code()));
  }
  return out;
}

// Small segments: tests store little, and every node's memfd is zero-filled.
inline server::LocalClusterOptions SmallCluster(int store_nodes = 1, bool shared_memory = true) {
  server::LocalClusterOptions o;
  o.store_nodes = store_nodes;
  o.segment_size = uint64_t{16} << 20;
  o.shared_memory = shared_memory;
  return o;
}

inline std::unique_ptr<server::LocalCluster> StartCluster(const server::LocalClusterOptions& o) {
  auto c = server::LocalCluster::Start(o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c.value()) : nullptr;
}

// The config ConnectTo uses: `cluster`'s master, and timeouts short enough that
// a hung call fails the test quickly. Tests that need another setting change
// it and connect with ConnectWith.
inline ClientConfig ConfigFor(const server::LocalCluster& cluster, bool use_shared_memory = true) {
  ClientConfig cc;
  cc.master_address = cluster.master_address();
  cc.use_shared_memory = use_shared_memory;
  cc.rpc_timeout_ms = 3000;
  cc.transfer_timeout_ms = 3000;
  return cc;
}

inline std::unique_ptr<Client> ConnectWith(const ClientConfig& cc) {
  auto c = Client::Connect(cc);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c.value()) : nullptr;
}

inline std::unique_ptr<Client> ConnectTo(const server::LocalCluster& cluster,
                                         bool use_shared_memory = true) {
  return ConnectWith(ConfigFor(cluster, use_shared_memory));
}

// Waits (bounded, about 10 s: only a hang guard) until `done` holds, as for
// what the master's background maintenance does; false when it never did.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 400 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return done();
}

// A test with a cluster and a client of its own. Base is ::testing::Test or a
// ::testing::TestWithParam.
template <typename Base>
class WithCluster : public Base {
 protected:
  // Starts cluster_ from `options` and connects client_ to it; a fatal failure
  // when either fails. In a test body: ASSERT_NO_FATAL_FAILURE(StartAndConnect(...)).
  void StartAndConnect(const server::LocalClusterOptions& options, bool use_shared_memory = true) {
    cluster_ = StartCluster(options);
    ASSERT_NE(cluster_, nullptr);
    client_ = ConnectTo(*cluster_, use_shared_memory);
    ASSERT_NE(client_, nullptr);
  }
  void TearDown() override {
    client_.reset();
    cluster_.reset();
  }

  std::unique_ptr<server::LocalCluster> cluster_;
  std::unique_ptr<Client> client_;
};

// Each test starts the cluster it needs with StartAndConnect.
using ClusterTest = WithCluster<::testing::Test>;

// One cluster (Options()) and one client per test, started before the test,
// the transport chosen by the parameter: true = shared memory on both sides
// (same-host memcpy), false = TCP only.
class ClientClusterTest : public WithCluster<::testing::TestWithParam<bool>> {
 protected:
  virtual server::LocalClusterOptions Options() { return SmallCluster(1, GetParam()); }

  void SetUp() override { StartAndConnect(Options(), GetParam()); }
};

inline std::string TransportName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Shm" : "Tcp";
}

}  // namespace crescent::client_test
