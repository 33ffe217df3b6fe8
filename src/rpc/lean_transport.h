// LeanTransport: the hot calls over the master's lean control protocol
// (control_channel.h) when it offers one, every other try over gRPC
// (ControlTransport, control_transport.h). With a token, every call but
// ControlEndpoints goes over an authenticated lean connection instead (the
// others as ControlMethod::kCall), never over gRPC, which carries no
// credential. Internal to the client side of rpc/.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "auth/token.h"
#include "rpc/control_channel.h"
#include "rpc/control_transport.h"

namespace crescent::rpc {

struct LeanOptions {
  bool enabled = true;            // false: every call goes over gRPC
  int64_t rpc_timeout_ms = 5000;  // the ControlEndpoints call's; connecting takes at most 1 s of it
  int control_spin_us = 0;
  uint64_t max_message_bytes = 64 << 20;
  std::optional<auth::Token> token;  // set: authenticate, and send every call over lean
  // Set: TLS on the lean TCP port (the master's Unix socket, which serves none,
  // is not used).
  std::shared_ptr<const TlsClientContext> tls;
};

class LeanTransport final : public ControlTransport {
 public:
  // `address`: the master's gRPC address, whose host the lean TCP port is on.
  // `grpc` carries every call the lean protocol does not (and must outlive this).
  LeanTransport(std::string address, LeanOptions options, ControlTransport& grpc);

  // A hot call goes over the lean connection when there is one: a deadline
  // returns kTimeout, a failed connection (or a master shutting down) is
  // retryable and dropped, and the next try connects again (or uses gRPC).
  TryOutcome Try(const ControlCall& call, const Message& request, Message* reply,
                 int64_t timeout_ms, const std::function<void()>* meanwhile) override;

  // The lean connection to use now (connecting when it is time to), or null
  // for gRPC (with a token: null when none could be made, and why in
  // `*why` when given).
  std::shared_ptr<ControlChannel> Channel(Status* why = nullptr);

 private:
  std::shared_ptr<ControlChannel> Connect(Status* why);
  // A call without a lean number of its own, as kCall on `channel`.
  Status CallByRow(ControlChannel& channel, const ControlCall& call, const Message& request,
                   Message* reply, ControlChannel::Deadline deadline);
  void Drop(const std::shared_ptr<ControlChannel>& used);

  const std::string address_;
  const LeanOptions options_;
  ControlTransport& grpc_;
  // The kept connection (null: use gRPC), and when to look for one again
  // after a failure.
  std::mutex mu_;
  std::shared_ptr<ControlChannel> channel_;
  std::chrono::steady_clock::time_point retry_at_{};
  std::mutex connect_mu_;  // one thread connects; the others use gRPC meanwhile
};

}  // namespace crescent::rpc
