// MasterHost: a running master as a process holds it — the engine with its
// background maintenance thread, the gRPC server in front, and the admin HTTP
// endpoint. Shared by `crescent master` and `crescent serve`. Destruction stops
// the parts in reverse order: HTTP, gRPC (in-flight calls finish), maintenance.
// Also the master half of LocalCluster (tests, benchmarks).
#pragma once

#include <memory>
#include <string>

#include "master/master_config.h"
#include "master/master_service.h"
#include "metrics/admin_http.h"
#include "rpc/master_server.h"
#include "transfer/capability.h"

namespace crescent::server {

struct MasterHostOptions {
  master::MasterConfig config;
  rpc::MasterServerOptions rpc;  // rpc.listen_address is host:port (port 0: any)
  std::string http_host = "127.0.0.1";
  int http_port = 9003;  // 0: no admin HTTP
};

class MasterHost {
 public:
  static StatusOr<std::unique_ptr<MasterHost>> Start(const MasterHostOptions& options,
                                                     const std::string& secret);
  master::MasterService& master() { return *master_; }
  ~MasterHost();

  // "host:port" clients use to reach the gRPC server.
  std::string address() const;
  // Human-readable lines saying where everything listens.
  std::string Describe() const;
  // Clients' calls are answered UNAVAILABLE from now on (rpc::MasterServer::
  // BeginDrain); the first step of a shutdown. The destructor drains too.
  void BeginDrain();

 private:
  explicit MasterHost(transfer::CapabilitySigner signer) : signer_(std::move(signer)) {}
  MasterHostOptions options_;
  std::string address_;
  transfer::CapabilitySigner signer_;
  std::unique_ptr<master::MasterService> master_;
  std::unique_ptr<rpc::MasterServer> rpc_;
  std::unique_ptr<metrics::AdminHttpServer> http_;
};

}  // namespace crescent::server
