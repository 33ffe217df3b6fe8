// Cluster: a real multi-process Crescent cluster on loopback for integration
// tests — one `crescent master` and any number of `crescent store` processes
// sharing a secret file, with the addresses parsed from what they print.
//
// Every process logs into the cluster's temp directory; when the running test
// has failed, the destructor prints the tail of each log and keeps the
// directory, so a failure can be read after the fact.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "crescent/client.h"
#include "integration/process.h"

namespace crescent::itest {

// Timeouts that only bound a hang; a healthy run is far below them.
inline constexpr milliseconds kStartTimeout{20000};
inline constexpr milliseconds kExitTimeout{10000};

struct ClusterOptions {
  int stores = 2;
  std::string segment_size = "64MiB";
  bool store_shm = true;                    // false: stores run with --no-shm
  int64_t heartbeat_ttl_ms = 1000;          // master: drop a silent node after this
  int64_t heartbeat_interval_ms = 100;      // store nodes
  std::vector<std::string> master_flags{};  // extra flags for `crescent master`
  std::vector<std::string> store_flags{};   // extra flags for every `crescent store`
};

struct StoreProcess {
  std::unique_ptr<Process> proc;
  std::string node_id;
  std::string segment;
  std::string endpoint;  // "host:port[;shm=NAME]"
  std::string host;
  uint16_t data_port = 0;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions options = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // The master, then options.stores store nodes, each waited for to be ready.
  testing::AssertionResult Start();
  // Starts (or restarts, after it died) the master on `port` (0: any free one).
  testing::AssertionResult StartMaster(uint16_t port = 0);
  // Starts one more store node; its index is stores().size() - 1 afterwards.
  // `env`: NAME=VALUE settings added to its environment (through env(1)).
  testing::AssertionResult AddStore(const std::vector<std::string>& extra_flags = {},
                                    const std::vector<std::string>& env = {});

  Process& master() { return *master_; }
  const std::string& master_address() const { return master_address_; }
  uint16_t master_port() const { return master_port_; }
  StoreProcess& store(size_t i) { return stores_[i]; }
  size_t store_count() const { return stores_.size(); }
  const std::string& secret_file() const { return secret_file_; }
  TempDir& dir() { return dir_; }

  // A client config for this cluster; use_shm chooses the transport (a node
  // started with --no-shm is reached over TCP either way).
  ClientConfig ClientConfigFor(bool use_shm) const;
  std::unique_ptr<Client> Connect(bool use_shm) const;

  // Polls client.Stat() until it lists exactly `n` segments.
  testing::AssertionResult WaitForSegments(Client& client, size_t n, milliseconds timeout) const;

 private:
  ClusterOptions options_;
  TempDir dir_;
  std::string secret_file_;
  int spawned_ = 0;
  std::unique_ptr<Process> master_;
  std::string master_address_;
  uint16_t master_port_ = 0;
  std::vector<StoreProcess> stores_;
};

// A test with a cluster and a client of its own. Base is testing::Test or a
// testing::TestWithParam.
template <typename Base>
class WithCluster : public Base {
 protected:
  // Starts cluster_ from `options`; a fatal failure when it cannot. In a test
  // body: ASSERT_NO_FATAL_FAILURE(StartCluster(...)).
  void StartCluster(ClusterOptions options) {
    cluster_ = std::make_unique<Cluster>(std::move(options));
    ASSERT_TRUE(cluster_->Start());
  }
  // StartCluster, then connects client_ to it; use_shm chooses the transport.
  void StartAndConnect(ClusterOptions options, bool use_shm) {
    ASSERT_NO_FATAL_FAILURE(StartCluster(std::move(options)));
    client_ = cluster_->Connect(use_shm);
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<Client> client_;  // declared after cluster_, so destroyed before it
};

// A `crescent serve` with its admin HTTP port on: the process, its master's
// gRPC address and the admin port.
// Waits until the master has settled the check of every object of the
// persistent segments it took over (crescent_pmem_verifications_pending is 0):
// until its check passes, such an object is not served.
testing::AssertionResult WaitForVerified(Client& client, milliseconds timeout);

struct ServeProcess {
  std::unique_ptr<Process> proc;
  std::string master;
  int http_port = 0;
};

// Starts `crescent serve --port 0 --http-port P --segment-size 64MiB EXTRA...`
// (EXTRA may give its own --segment-size)
// logging to dir/serve.log, and waits for it to be ready. The admin port is
// picked here, so another process may take it before serve binds it (seen while
// another test run shared the machine): then serve exits saying so, and a fresh
// port is tried.
testing::AssertionResult StartServe(TempDir& dir, const std::vector<std::string>& extra,
                                    ServeProcess* out);

// Runs `crescent ARGS...` to completion (stdin from `stdin_data`), capturing
// stdout, stderr and the exit code; scratch files go to `scratch_dir`.
CommandResult RunCrescent(const std::vector<std::string>& args, const std::string& scratch_dir,
                          const std::string& stdin_data = "");

// Random bytes (deterministic per seed).
std::vector<std::byte> RandomBytes(size_t size, uint32_t seed);
std::string RandomString(size_t size, uint32_t seed);

}  // namespace crescent::itest
