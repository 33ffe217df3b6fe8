// GrpcTransport: the control calls over gRPC (ControlTransport,
// control_transport.h). One channel and stub, replaced as a whole when gRPC
// gives up on its connection, and a pool of completion queues that calls
// wait on. Internal to the client side of rpc/.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rpc/control_transport.h"

namespace crescent::rpc {

// Completion queues for calls, reused: gRPC's blocking stub creates (and
// destroys) a queue, and with it a pollset and its wake-up eventfd, for every
// call; on a VM those extra system calls were a measurable share of a round
// trip. A call takes an idle queue (or makes one), waits on it for its own
// completion only, and gives it back. Queues die with the pool.
class QueuePool {
 public:
  ~QueuePool();
  std::unique_ptr<grpc::CompletionQueue> Take();
  void Give(std::unique_ptr<grpc::CompletionQueue> cq);

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<grpc::CompletionQueue>> idle_;
};

class GrpcTransport final : public ControlTransport {
 public:
  // Null when gRPC makes no channel to `address`. `credentials`: the
  // channel's (TLS), null for none. `closed_hint`: added to gRPC's "Socket
  // closed", the master ending a connection in its handshake (what that may
  // mean for this client's TLS settings).
  static std::unique_ptr<GrpcTransport> Create(
      const std::string& address, const grpc::ChannelArguments& args,
      std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr,
      std::string closed_hint = "");

  // UNAVAILABLE is retryable; any other failure comes back as
  // "master RPC NAME to ADDRESS failed (grpc code N): ...".
  TryOutcome Try(const ControlCall& call, const Message& request, Message* reply,
                 int64_t timeout_ms, const std::function<void()>* meanwhile) override;

 private:
  // The channel and its stub, replaced as a whole by Renew; a call holds the
  // one it started on.
  struct Connection {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<Master::Stub> stub;
  };
  GrpcTransport(std::string address, grpc::ChannelArguments args,
                std::shared_ptr<grpc::ChannelCredentials> credentials, std::string closed_hint);
  std::shared_ptr<const Connection> Connect() const;
  std::shared_ptr<const Connection> Current() const;
  void Renew(const std::shared_ptr<const Connection>& used);
  grpc::Status CallOnce(const Connection& conn, const ControlCall& call, grpc::ClientContext& ctx,
                        const Message& request, Message* reply,
                        const std::function<void()>* meanwhile);

  const std::string address_;
  const grpc::ChannelArguments args_;
  const std::string closed_hint_;
  const bool tls_;  // credentials were given
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  mutable std::mutex mu_;  // guards `connection_` (the pointer, not what it points to)
  std::shared_ptr<const Connection> connection_;
  QueuePool queues_;  // after connection_: destroyed first, when no call is running
};

}  // namespace crescent::rpc
