#include "cli/master_host.h"

namespace crescent::cli {

StatusOr<std::unique_ptr<MasterHost>> MasterHost::Start(MasterFlags flags,
                                                        const std::string& secret) {
  StatusOr<transfer::CapabilitySigner> signer = transfer::CapabilitySigner::Create(secret);
  if (!signer.ok()) return signer.status();
  std::unique_ptr<MasterHost> host(new MasterHost(std::move(signer.value())));
  flags.Finish();
  host->flags_ = flags;

  auto master = master::MasterService::Create(flags.config);
  if (!master.ok()) return master.status();
  host->master_ = std::move(master.value());
  host->master_->StartBackground();

  auto rpc = rpc::MasterServer::Start(flags.server, *host->master_, host->signer_);
  if (!rpc.ok()) return rpc.status();
  host->rpc_ = std::move(rpc.value());
  host->flags_.port = host->rpc_->port();

  if (flags.http_port != 0) {
    auto http = metrics::AdminHttpServer::Start(flags.host, flags.http_port, *host->master_);
    if (!http.ok()) return http.status();
    host->http_ = std::move(http.value());
  }
  return host;
}

std::string MasterHost::address() const {
  return flags_.host + ":" + std::to_string(flags_.port);
}

std::string MasterHost::Describe() const {
  std::string out = "master (gRPC) listening on " + address();
  if (!flags_.server.unix_socket.empty()) out += " and unix:" + flags_.server.unix_socket;
  out += ", eviction policy " + flags_.config.eviction_policy + "\n";
  if (http_) {
    std::string base = "http://" + flags_.host + ":" + std::to_string(http_->port());
    out += "metrics on " + base + "/metrics, health on " + base + "/health\n";
  }
  return out;
}

MasterHost::~MasterHost() {
  http_.reset();
  if (rpc_) rpc_->Shutdown();
  if (master_) master_->StopBackground();
}

}  // namespace crescent::cli
