// GrpcAuth: who a gRPC call comes from, on a master with credentials
// (docs/security.md, "gRPC"). gRPC connections run no handshake of ours, so a
// call proves its caller by the token in its `authorization` metadata
// ("Bearer NAME:SECRET", auth/bearer.h), accepted only on a TLS connection:
// without TLS the token would cross the wire in clear, and a call carrying one
// is refused. Without credentials every call is Unchecked().
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "auth/handshake.h"
#include "crescent/status.h"
#include "rpc/access.h"

namespace grpc {
class ServerContext;
}

namespace crescent::rpc {

class GrpcAuth {
 public:
  // Null: authenticate nobody (every call Unchecked()). Thread-safe.
  void Set(std::shared_ptr<const auth::ServerCredentials> credentials);
  bool on() const { return on_.load(std::memory_order_acquire); }
  // The caller of the call in `ctx`: UNAUTHENTICATED (saying why: no token,
  // a token off TLS, an unknown token) when it proves none.
  StatusOr<Caller> Verify(const grpc::ServerContext& ctx) const;

 private:
  std::atomic<bool> on_{false};
  mutable std::mutex mu_;  // guards credentials_
  std::shared_ptr<const auth::ServerCredentials> credentials_;
};

}  // namespace crescent::rpc
