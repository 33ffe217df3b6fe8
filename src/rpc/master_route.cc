#include "rpc/master_route.h"

#include "rpc/master_client.h"
#include "rpc/master_client_wire.h"

namespace crescent::rpc {
namespace {

constexpr int kReconnectInitialMs = 50;
constexpr int kReconnectMaxMs = 250;

// `args` gets the name to check the master's certificate for, when given.
StatusOr<ClientTls> MakeClientTls(const TlsFiles& files, const std::string& address,
                                  grpc::ChannelArguments& args) {
  StatusOr<TlsPem> pem = LoadClientTls(files);
  if (!pem.ok()) return pem.status();
  if (pem->ca.empty()) {
    return ClientTls{.grpc = nullptr,
                     .lean = nullptr,
                     .closed_hint =
                         "a master that serves TLS closes plain connections: if it was started "
                         "with --tls-cert, give this client --tls-ca"};
  }
  if (address.rfind("unix", 0) == 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "the master's Unix socket " + address +
                      " serves no TLS: give its HOST:PORT with --tls-ca, or drop --tls-ca");
  }
  StatusOr<std::shared_ptr<TlsClientContext>> lean =
      TlsClientContext::Create(*pem, files.server_name);
  if (!lean.ok()) return lean.status();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem->ca;
  ssl.pem_private_key = pem->key;
  ssl.pem_cert_chain = pem->cert;
  if (!files.server_name.empty()) args.SetSslTargetNameOverride(files.server_name);
  return ClientTls{grpc::SslCredentials(ssl), std::move(*lean),
                   pem->cert.empty()
                       ? "a master with mutual TLS (--tls-ca) closes connections that present no "
                         "client certificate: give --tls-cert and --tls-key"
                       : "a master with mutual TLS closes connections whose client certificate "
                         "no CA of its --tls-ca signed"};
}

}  // namespace

StatusOr<RouteSettings> MakeRouteSettings(const MasterClientOptions& options,
                                          const std::string& address,
                                          std::optional<auth::Token> token) {
  RouteSettings out;
  grpc::ChannelArguments& args = out.args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  // gRPC waits 1 s, then up to 120 s (x1.6 each time), before it tries a lost
  // connection again, and fails calls at once meanwhile. Reconnect within
  // kReconnectMaxMs instead; a master is one host, not a fleet.
  // (GRPC_ARG_MIN_RECONNECT_BACKOFF_MS stays: in gRPC it is the connect
  // timeout too, and a short one cut off handshakes with a busy master.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kReconnectInitialMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kReconnectMaxMs);
  // Each channel its own connection: a renewed channel (Impl::Renew) must not
  // inherit the failed one's from gRPC's process-wide pool.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  StatusOr<ClientTls> tls = MakeClientTls(options.tls, address, args);
  if (!tls.ok()) return tls.status();
  out.tls = std::move(*tls);
  out.lean = LeanOptions{.enabled = options.lean_control,
                         .rpc_timeout_ms = options.rpc_timeout_ms,
                         .control_spin_us = options.control_spin_us,
                         .max_message_bytes = static_cast<uint64_t>(options.max_message_bytes),
                         .token = std::move(token),
                         .tls = out.tls.lean};
  return out;
}

StatusOr<std::shared_ptr<MasterRoute>> MakeMasterRoute(const std::string& address,
                                                       const RouteSettings& settings) {
  auto route = std::make_shared<MasterRoute>();
  route->address = address;
  route->liveness = std::make_unique<LivenessLink>(client_wire::HostOfAddress(address),
                                                   settings.args, settings.tls.grpc);
  route->grpc =
      GrpcTransport::Create(address, settings.args, settings.tls.grpc, settings.tls.closed_hint);
  if (!route->grpc) {
    return Status(ErrorCode::kInvalidArgument, "cannot create a channel to " + address);
  }
  route->lean = std::make_unique<LeanTransport>(address, settings.lean, *route->grpc);
  return route;
}

}  // namespace crescent::rpc
