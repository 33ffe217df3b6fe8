// LocalCluster: a whole cluster inside one process — a MasterHost on an
// ephemeral loopback port and N store nodes talking to it over real gRPC, TCP
// and shared memory. For client tests and benchmarks that need the real wire
// without spawning processes (the integration tests spawn real ones).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/master_host.h"
#include "store/store_node.h"

namespace crescent::server {

struct LocalClusterOptions {
  MasterHostOptions master;  // rpc.listen_address port is forced to 0 (any)
  int store_nodes = 1;
  uint64_t segment_size = uint64_t{64} << 20;
  bool shared_memory = true;
  int64_t heartbeat_interval_ms = 200;
  std::string tcp_congestion;  // the store nodes' data connections; "" = system default
  bool warm_pages = true;      // StoreNodeOptions::warm_pages
  // A persistent segment per node when non-zero: the file pmem_dir/node-I.pmem
  // of this many bytes (StoreNodeOptions::persistent).
  uint64_t pmem_file_size = 0;
  std::string pmem_dir;

  LocalClusterOptions() {
    master.rpc.listen_address = "127.0.0.1:0";
    master.http_port = 0;
  }
};

class LocalCluster {
 public:
  static StatusOr<std::unique_ptr<LocalCluster>> Start(const LocalClusterOptions& options);
  ~LocalCluster();

  const std::string& master_address() const { return address_; }
  master::MasterService& master() { return host_->master(); }
  store::StoreNode& node(size_t i) { return *nodes_[i]; }
  size_t node_count() const { return nodes_.size(); }
  // Blocks until every node's page warmer is done (benchmarks: it competes
  // for the CPU while it runs).
  void WaitPagesWarm() {
    for (auto& n : nodes_) n->WaitPagesWarm();
  }
  // Stops node i as a clean shutdown would (unmounts it).
  void StopNode(size_t i) { nodes_[i]->Stop(); }

 private:
  LocalCluster() = default;
  std::unique_ptr<MasterHost> host_;
  std::vector<std::unique_ptr<store::StoreNode>> nodes_;
  std::string address_;
};

}  // namespace crescent::server
