#include "rpc/lean_transport.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "rpc/master_client_wire.h"

namespace crescent::rpc {

LeanTransport::LeanTransport(std::string address, LeanOptions options, ControlTransport& grpc)
    : address_(std::move(address)), options_(options), grpc_(grpc) {}

std::shared_ptr<ControlChannel> LeanTransport::Channel() {
  if (!options_.enabled) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (channel_ && !channel_->broken()) return channel_;
    if (now < retry_at_) return nullptr;
  }
  std::unique_lock connecting(connect_mu_, std::try_to_lock);
  if (!connecting.owns_lock()) return nullptr;
  std::shared_ptr<ControlChannel> fresh = Connect();
  std::lock_guard lock(mu_);
  channel_ = fresh;
  if (!fresh) retry_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  return fresh;
}

// After a lean call failed with kUnavailable: a broken connection is dropped.
void LeanTransport::Drop(const std::shared_ptr<ControlChannel>& used) {
  if (!used->broken()) return;
  std::lock_guard lock(mu_);
  if (channel_ == used) channel_.reset();
}

// Asks the master where it serves the lean protocol and connects there: its
// Unix socket first (a client on its host), then TCP on the host that
// `address_` names. A connection counts only if its Hello names the same
// master instance (a socket path on another host may be another master's).
std::shared_ptr<ControlChannel> LeanTransport::Connect() {
  proto::ControlEndpointsResponse where;
  if (!grpc_
           .Try(calls::ControlEndpoints.call, proto::Empty(), &where, options_.rpc_timeout_ms,
                nullptr)
           .status.ok() ||
      where.port() == 0) {
    return nullptr;
  }
  std::vector<std::string> targets;
  if (!where.unix_socket().empty()) targets.push_back("unix:" + where.unix_socket());
  targets.push_back(client_wire::HostOfAddress(address_) + ":" + std::to_string(where.port()));
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min<int64_t>(options_.rpc_timeout_ms, 1000));
  for (const std::string& target : targets) {
    uint64_t instance = 0;
    auto channel = ControlChannel::Connect(target, deadline, &instance,
                                           std::chrono::microseconds(options_.control_spin_us),
                                           options_.max_message_bytes);
    if (channel.ok() && instance == where.instance()) return std::move(channel.value());
  }
  return nullptr;
}

TryOutcome LeanTransport::Try(const ControlCall& call, const Message& request, Message* reply,
                              int64_t timeout_ms, const std::function<void()>* meanwhile) {
  std::shared_ptr<ControlChannel> channel = call.lean ? Channel() : nullptr;
  if (!channel) return grpc_.Try(call, request, reply, timeout_ms, meanwhile);
  Status s = channel->Call(*call.lean, request, reply,
                           std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms),
                           meanwhile);
  if (s.ok()) return {s};
  const std::string what = std::string("master call ") + call.name + " to " + channel->target();
  if (s.code() == ErrorCode::kTimeout) {
    return {Status(ErrorCode::kTimeout,
                   what + " failed: no answer within " + std::to_string(timeout_ms) + " ms")};
  }
  if (s.code() != ErrorCode::kUnavailable)
    return {Status(s.code(), what + " failed: " + s.message())};
  Drop(channel);
  return {Status(ErrorCode::kUnavailable, s.message()), true};
}

}  // namespace crescent::rpc
