// Shared fixture of the RPC tests: a real MasterService (SteadyClock, as in
// production), a MasterServer on 127.0.0.1 port 0, and a MasterClient to it.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "master/master_service.h"
#include "rpc/master_client.h"
#include "rpc/master_server.h"
#include "transfer/capability.h"

namespace crescent::rpc::testing {

inline constexpr const char* kSecret = "rpc-test-secret-0123456789abcdef";
inline constexpr const char* kEndpointA = "127.0.0.1:7001;shm=crescent-a";

class RpcTest : public ::testing::Test {
 protected:
  master::MasterConfig config_;
  std::unique_ptr<master::MasterService> master_;
  std::unique_ptr<transfer::CapabilitySigner> signer_;
  std::unique_ptr<MasterServer> server_;
  std::unique_ptr<MasterClient> client_;

  static MasterServerOptions DefaultServerOptions() {
    MasterServerOptions o;
    o.listen_address = "127.0.0.1:0";
    return o;
  }

  // (Re)starts the server with `options` and a client to it; the engine survives.
  void Start(MasterServerOptions options = DefaultServerOptions(),
             MasterClientOptions client_options = {}) {
    client_.reset();
    server_.reset();
    if (!master_) {
      auto m = master::MasterService::Create(config_);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      master_ = std::move(m).value();
      auto signer = transfer::CapabilitySigner::Create(kSecret);
      ASSERT_TRUE(signer.ok()) << signer.status().ToString();
      signer_ = std::make_unique<transfer::CapabilitySigner>(std::move(signer).value());
    }
    auto server = MasterServer::Start(options, *master_, *signer_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    if (client_options.address.empty()) {
      client_options.address = "127.0.0.1:" + std::to_string(server_->port());
    }
    auto client = MasterClient::Create(client_options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  master::SegmentSpec Spec(const std::string& name, const std::string& node = "node-a",
                           const std::string& endpoint = kEndpointA) {
    return {name, 1 << 20, node, endpoint, master::Tier::kDram, kOwnerToken};
  }
  static constexpr uint64_t kOwnerToken = 0x5eed'0000'0000'0001;

  // A raw TCP connection to the server's lean port (for frames no client
  // would send, or none), its reads given up after `timeout_s`.
  int RawLean(int timeout_s) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->control_port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval tv{timeout_s, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }

  void Mount(const std::string& name = "seg-a") {
    auto id = client_->MountSegment(Spec(name));
    ASSERT_TRUE(id.ok()) << id.status().ToString();
  }

  Status Put(const std::string& key, uint64_t size = 128) {
    auto r = client_->PutStart(key, size, {});
    if (!r.ok()) return r.status();
    return client_->PutEnd(key, r->token);
  }

  static std::vector<std::string> Keys(const std::string& prefix, size_t n) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
    return keys;
  }

  // `threads` callers share client_, each putting, reading back and asking for
  // an absent key `per_thread` times (keys "PREFIX<thread>-<i>", sized
  // 64 + thread): how many answers were wrong or failed.
  int CallsFromManyThreads(int threads, int per_thread, const std::string& prefix) {
    std::atomic<int> wrong{0};
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t) {
      running.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          const std::string key = prefix + std::to_string(t) + "-" + std::to_string(i);
          auto put = client_->PutStart(key, 64 + t, {});
          if (!put.ok() || !client_->PutEnd(key, put->token).ok()) {
            wrong.fetch_add(1);
            continue;
          }
          auto read = client_->GetReplicaList(key);
          // The answer is this key's: its own size.
          if (!read.ok() || read->size != static_cast<uint64_t>(64 + t)) wrong.fetch_add(1);
          auto absent = client_->Exists(key + "-no");
          if (!absent.ok() || *absent) wrong.fetch_add(1);
        }
      });
    }
    for (auto& th : running) th.join();
    return wrong.load();
  }
};

}  // namespace crescent::rpc::testing
