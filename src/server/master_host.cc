#include "server/master_host.h"

namespace crescent::server {

StatusOr<std::unique_ptr<MasterHost>> MasterHost::Start(const MasterHostOptions& options,
                                                        const std::string& secret) {
  StatusOr<transfer::CapabilitySigner> signer = transfer::CapabilitySigner::Create(secret);
  if (!signer.ok()) return signer.status();
  std::unique_ptr<MasterHost> host(new MasterHost(std::move(signer.value())));
  host->options_ = options;
  auto master = master::MasterService::Create(options.config);
  if (!master.ok()) return master.status();
  host->master_ = std::move(master.value());
  host->master_->StartBackground();

  auto rpc = rpc::MasterServer::Start(options.rpc, *host->master_, host->signer_);
  if (!rpc.ok()) return rpc.status();
  host->rpc_ = std::move(rpc.value());
  const std::string& listen = options.rpc.listen_address;
  host->address_ = listen.substr(0, listen.rfind(':')) + ":" + std::to_string(host->rpc_->port());

  if (options.http_port != 0) {
    auto http =
        metrics::AdminHttpServer::Start(options.http_host, options.http_port, *host->master_);
    if (!http.ok()) return http.status();
    host->http_ = std::move(http.value());
  }
  return host;
}

std::string MasterHost::address() const { return address_; }

std::string MasterHost::Describe() const {
  std::string out = "master (gRPC) listening on " + address();
  if (!options_.rpc.unix_socket.empty()) out += " and unix:" + options_.rpc.unix_socket;
  out += ", eviction policy " + options_.config.eviction_policy + "\n";
  if (http_) {
    std::string base = "http://" + options_.http_host + ":" + std::to_string(http_->port());
    out += "metrics on " + base + "/metrics, health on " + base + "/health\n";
  }
  return out;
}

void MasterHost::BeginDrain() {
  if (rpc_) rpc_->BeginDrain();
}

MasterHost::~MasterHost() {
  http_.reset();
  if (rpc_) rpc_->Shutdown();
  if (master_) master_->StopBackground();
}

}  // namespace crescent::server
