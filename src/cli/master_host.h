// MasterHost: a running master as a process holds it — the engine with its
// background maintenance thread, the gRPC server in front, and the admin HTTP
// endpoint. Shared by `crescent master` and `crescent serve`. Destruction stops
// the parts in reverse order: HTTP, gRPC (in-flight calls finish), maintenance.
#pragma once

#include <memory>
#include <string>

#include "cli/master_flags.h"
#include "master/master_service.h"
#include "metrics/admin_http.h"
#include "rpc/master_server.h"
#include "transfer/capability.h"

namespace crescent::cli {

class MasterHost {
 public:
  static StatusOr<std::unique_ptr<MasterHost>> Start(MasterFlags flags, const std::string& secret);
  ~MasterHost();

  // "host:port" clients use to reach the gRPC server.
  std::string address() const;
  // Human-readable lines saying where everything listens.
  std::string Describe() const;

 private:
  explicit MasterHost(transfer::CapabilitySigner signer) : signer_(std::move(signer)) {}
  MasterFlags flags_;
  transfer::CapabilitySigner signer_;
  std::unique_ptr<master::MasterService> master_;
  std::unique_ptr<rpc::MasterServer> rpc_;
  std::unique_ptr<metrics::AdminHttpServer> http_;
};

}  // namespace crescent::cli
