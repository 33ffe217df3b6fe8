#include "rpc/grpc_setup.h"

#include <absl/synchronization/mutex.h>
#include <grpcpp/support/status.h>

#include <cstdlib>
#include <mutex>

namespace crescent::rpc {

void PrepareGrpcProcess() {
  static std::once_flag once;
  std::call_once(once, [] {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    setenv("GRPC_POLL_STRATEGY", "poll", /*overwrite=*/0);
  });
}

ErrorCode ErrorCodeOfGrpc(int grpc_code) {
  switch (static_cast<grpc::StatusCode>(grpc_code)) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ErrorCode::kTimeout;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::UNKNOWN:
      return ErrorCode::kUnavailable;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:  // e.g. a message over the size limit
      return ErrorCode::kInvalidArgument;
    case grpc::StatusCode::UNIMPLEMENTED:
      return ErrorCode::kUnsupported;
    case grpc::StatusCode::UNAUTHENTICATED:
      return ErrorCode::kUnauthenticated;
    case grpc::StatusCode::PERMISSION_DENIED: return ErrorCode::kPermissionDenied;
    default:
      return ErrorCode::kInternal;
  }
}

}  // namespace crescent::rpc
