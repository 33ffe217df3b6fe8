#include "rpc/grpc_setup.h"

#include <absl/synchronization/mutex.h>

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

}  // namespace crescent::rpc
