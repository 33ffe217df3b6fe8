// LivenessLink: a store node's channel to the master's Liveness service
// (master.proto), the server that answers heartbeats on a port and thread of
// their own (master_server.h), so that a slow call of the Master service never
// delays them. MasterClient learns where it is from ControlEndpoints after
// each mount (and, after the link failed, at most once a second) and sends
// heartbeats there; while none is known, or when the link fails, heartbeats
// go to Master.Heartbeat as before. Thread-safe.
//
// Each heartbeat names the master process the port was learnt from: a port
// that another master process took over answers UNAVAILABLE instead of
// counting the heartbeat (a master restarted on the same gRPC port is found
// through Master.Heartbeat, whose NODE_UNKNOWN makes the node mount again).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "crescent/status.h"

namespace crescent::proto {
class HeartbeatResponse;  // messages.proto
}  // namespace crescent::proto

namespace crescent::rpc {

class LivenessLink {
 public:
  // `host`: the master's host, as a HOST of HOST:PORT. `args` and
  // `credentials` (null: none): the channel's (MasterClient's).
  LivenessLink(std::string host, grpc::ChannelArguments args,
               std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);
  ~LivenessLink();

  // Where the service is (ControlEndpointsResponse.liveness_port and
  // .instance); port 0: none.
  void Learn(uint32_t port, uint64_t instance);
  // Whether it is time to ask where the service is: none is known, the link
  // failed at least a second ago, and the master did not say it has none
  // (this call counts as an ask).
  bool ShouldLook();
  // One heartbeat of `node` to the service, within `timeout_ms`. nullopt when
  // no service is known, or it could not be reached or belongs to another
  // master process (then it is forgotten): the caller sends it to
  // Master.Heartbeat instead. Otherwise the master's answer (its whole reply
  // in *reply, when given), or kTimeout.
  std::optional<Status> Heartbeat(const std::string& node, int64_t timeout_ms,
                                  proto::HeartbeatResponse* reply = nullptr);

 private:
  struct Target;
  std::shared_ptr<const Target> Current() const;
  void Forget(const std::shared_ptr<const Target>& used);

  const std::string host_;
  const grpc::ChannelArguments args_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  mutable std::mutex mu_;                 // guards the two below
  std::shared_ptr<const Target> target_;  // null: none known
  std::chrono::steady_clock::time_point next_look_{};
};

}  // namespace crescent::rpc
