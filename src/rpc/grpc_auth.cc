#include "rpc/grpc_auth.h"

#include <grpcpp/grpcpp.h>

#include "auth/bearer.h"

namespace crescent::rpc {
namespace {

constexpr const char* kNeedsToken =
    "this master needs a token: over gRPC, a call carries it as \"authorization: Bearer "
    "NAME:SECRET\" metadata on a TLS connection; Crescent's own clients, given one "
    "(--token-file, $CRESCENT_TOKEN), make their calls over the lean control protocol, "
    "authenticated (docs/security.md)";

bool OverTls(const grpc::ServerContext& ctx) {
  const std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (!auth) return false;
  for (const grpc::string_ref& v : auth->FindPropertyValues("transport_security_type")) {
    if (std::string_view(v.data(), v.size()) == "ssl") return true;
  }
  return false;
}

}  // namespace

void GrpcAuth::Set(std::shared_ptr<const auth::ServerCredentials> credentials) {
  std::lock_guard lock(mu_);
  on_.store(credentials != nullptr, std::memory_order_release);
  credentials_ = std::move(credentials);
}

StatusOr<Caller> GrpcAuth::Verify(const grpc::ServerContext& ctx) const {
  std::shared_ptr<const auth::ServerCredentials> creds;
  {
    std::lock_guard lock(mu_);
    creds = credentials_;
  }
  if (!creds) return Unchecked();
  const auto& metadata = ctx.client_metadata();
  const auto it = metadata.find(std::string(auth::kBearerHeader));
  if (it == metadata.end()) return Status(ErrorCode::kUnauthenticated, kNeedsToken);
  if (!OverTls(ctx)) {
    return Status(ErrorCode::kUnauthenticated,
                  "a token over gRPC needs TLS (the master's --tls-cert): refused, since it "
                  "crossed the wire in clear; revoke it (crescent token rm) and use a new one");
  }
  StatusOr<auth::Identity> id =
      auth::VerifyBearer(*creds, std::string_view(it->second.data(), it->second.size()));
  if (!id.ok()) return id.status();
  return Caller{id->role, std::move(id->name), std::move(id->tenant)};
}

}  // namespace crescent::rpc
