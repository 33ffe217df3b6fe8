// MasterRoute: a client's ways to one master process (MasterClient): its gRPC
// channel, the lean control connection found through it, and the store
// node's link to its Liveness service. A client of one master has one for
// its life; a client of a cluster (an etcd:// address, leader_transport.h)
// makes one for each leader it follows. Internal to the client side of rpc/.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "auth/token.h"
#include "crescent/status.h"
#include "rpc/grpc_transport.h"
#include "rpc/lean_transport.h"
#include "rpc/liveness_link.h"
#include "rpc/tls.h"

namespace crescent::rpc {

struct MasterClientOptions;

// A client's TLS (MasterClientOptions::tls): gRPC's credentials and the lean
// protocol's context; both null when it has none.
struct ClientTls {
  std::shared_ptr<grpc::ChannelCredentials> grpc;
  std::shared_ptr<const TlsClientContext> lean;
  std::string closed_hint;  // GrpcTransport::Create's
};

// What every route of one client shares: made once from its options.
struct RouteSettings {
  grpc::ChannelArguments args;
  ClientTls tls;
  LeanOptions lean;
};

// The settings for `options`, whose master is at `address` (a unix: address
// refuses TLS); kInvalidArgument for TLS files that cannot be read or used.
StatusOr<RouteSettings> MakeRouteSettings(const MasterClientOptions& options,
                                          const std::string& address,
                                          std::optional<auth::Token> token);

struct MasterRoute {
  std::string address;  // the master's gRPC address
  std::unique_ptr<GrpcTransport> grpc;
  std::unique_ptr<LeanTransport> lean;  // over `grpc`: the calls go here
  std::unique_ptr<LivenessLink> liveness;
};

// The route to the master at `address` (CheckAddress'ed by the caller);
// kInvalidArgument when gRPC makes no channel to it.
StatusOr<std::shared_ptr<MasterRoute>> MakeMasterRoute(const std::string& address,
                                                       const RouteSettings& settings);

}  // namespace crescent::rpc
