#include "rpc/control_transport.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace crescent::rpc {

Status ControlRetry::Invoke(const ControlCall& call, const Message& request, Message* reply,
                            const CallOptions& how) const {
  const int attempts = how.tries > 0 ? how.tries : options_.attempts;
  int64_t backoff_ms = options_.backoff_initial_ms;
  std::string last_error;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    TryOutcome out = transport_.Try(call, request, reply, options_.rpc_timeout_ms,
                                    attempt == 1 ? how.meanwhile : nullptr);
    if (!out.retry) return std::move(out.status);
    last_error = out.status.message();
    if (attempt < attempts && !out.at_once) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, options_.backoff_max_ms);
    }
  }
  return Status(ErrorCode::kUnavailable,
                "master at " + address_ + " unreachable after " + std::to_string(attempts) +
                    (attempts == 1 ? " attempt: " : " attempts: ") + last_error);
}

}  // namespace crescent::rpc
