#include "server/local_cluster.h"

#include "transfer/capability.h"

namespace crescent::server {

StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(const LocalClusterOptions& options) {
  std::unique_ptr<LocalCluster> c(new LocalCluster());
  std::string secret = transfer::RandomSecret();
  MasterHostOptions mo = options.master;
  const std::string& listen = mo.rpc.listen_address;
  mo.rpc.listen_address = listen.substr(0, listen.rfind(':')) + ":0";
  auto host = MasterHost::Start(mo, secret);
  if (!host.ok()) return host.status();
  c->host_ = std::move(host.value());
  c->address_ = c->host_->address();
  for (int i = 0; i < options.store_nodes; ++i) {
    store::StoreNodeOptions no;
    no.node_id = "node-" + std::to_string(i);
    no.segment_size = options.segment_size;
    no.shared_memory = options.shared_memory;
    no.heartbeat_interval_ms = options.heartbeat_interval_ms;
    no.tcp_congestion = options.tcp_congestion;
    no.warm_pages = options.warm_pages;
    if (options.pmem_file_size != 0) {
      no.persistent.push_back({options.pmem_dir + "/node-" + std::to_string(i) + ".pmem",
                               options.pmem_file_size});
    }
    no.master.address = c->address_;
    auto node = store::StoreNode::Start(no, secret);
    if (!node.ok()) return node.status();
    c->nodes_.push_back(std::move(node.value()));
  }
  return c;
}

LocalCluster::~LocalCluster() {
  for (auto& n : nodes_) n->Stop();
  nodes_.clear();
  host_.reset();
}

}  // namespace crescent::server
