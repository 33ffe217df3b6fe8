#include "rpc/lean_transport.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "rpc/master_client_wire.h"

namespace crescent::rpc {

LeanTransport::LeanTransport(std::string address, LeanOptions options, ControlTransport& grpc)
    : address_(std::move(address)), options_(options), grpc_(grpc) {}

std::shared_ptr<ControlChannel> LeanTransport::Channel(Status* why) {
  if (!options_.enabled) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (channel_ && !channel_->broken()) return channel_;
    // With a token there is no gRPC to use meanwhile: every try connects.
    if (!options_.token && now < retry_at_) return nullptr;
  }
  // With a token, a caller waits for the thread connecting (and then tries
  // itself if that one failed): there is nothing else to do.
  std::unique_lock connecting(connect_mu_, std::defer_lock);
  if (options_.token) {
    connecting.lock();
    std::lock_guard lock(mu_);
    if (channel_ && !channel_->broken()) return channel_;
  } else if (!connecting.try_lock()) {
    return nullptr;
  }
  Status failure;
  std::shared_ptr<ControlChannel> fresh = Connect(&failure);
  if (why != nullptr) *why = failure;
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
//
// With a token each connection authenticates; `*why` says why none could be
// made: the master's answer (UNAUTHENTICATED for an unknown token), or
// kUnavailable when it could not be reached.
std::shared_ptr<ControlChannel> LeanTransport::Connect(Status* why) {
  proto::ControlEndpointsResponse where;
  const TryOutcome found = grpc_.Try(calls::ControlEndpoints.call, proto::Empty(), &where,
                                     options_.rpc_timeout_ms, nullptr);
  if (!found.status.ok()) {
    *why = found.retry ? Status(ErrorCode::kUnavailable, found.status.message()) : found.status;
    return nullptr;
  }
  if (where.port() == 0) {
    *why = Status(ErrorCode::kUnsupported,
                  "the master at " + address_ +
                      " serves no lean control protocol, which a client with a token needs");
    return nullptr;
  }
  const auth::Token* token = options_.token ? &*options_.token : nullptr;
  std::vector<std::string> targets;
  if (!where.unix_socket().empty() && !options_.tls) {
    targets.push_back("unix:" + where.unix_socket());
  }
  targets.push_back(client_wire::HostOfAddress(address_) + ":" + std::to_string(where.port()));
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min<int64_t>(options_.rpc_timeout_ms, 1000));
  *why = Status(ErrorCode::kUnavailable, "cannot reach the master's lean control protocol");
  for (const std::string& target : targets) {
    uint64_t instance = 0;
    auto channel = ControlChannel::Connect(target, deadline, &instance,
                                           std::chrono::microseconds(options_.control_spin_us),
                                           options_.max_message_bytes, token, options_.tls.get());
    if (channel.ok() && instance == where.instance()) return std::move(channel.value());
    if (channel.ok() || why->code() != ErrorCode::kUnavailable) continue;
    // The master's refusal of the token (unknown; or a master that authenticates
    // nobody) says more than a later target's silence; anything else is retried.
    const Status& s = channel.status();
    *why = s.code() == ErrorCode::kUnauthenticated || s.code() == ErrorCode::kUnsupported
               ? Status(s.code(),
                        "the master at " + target + " refused this client's token: " + s.message())
               : Status(ErrorCode::kUnavailable, s.message());
  }
  return nullptr;
}

Status LeanTransport::CallByRow(ControlChannel& channel, const ControlCall& call,
                                const Message& request, Message* reply,
                                ControlChannel::Deadline deadline) {
  std::string body(1, static_cast<char>(call.row));
  if (!request.AppendToString(&body)) {
    return Status(ErrorCode::kInvalidArgument, std::string("cannot encode a ") + call.name);
  }
  std::string answer;
  if (Status s = channel.CallRaw(ControlMethod::kCall, body, &answer, deadline); !s.ok()) return s;
  reply->Clear();
  if (!reply->ParseFromString(answer)) {
    return Status(ErrorCode::kParseError,
                  std::string("the master's answer to ") + call.name + " does not parse");
  }
  return Status::Ok();
}

TryOutcome LeanTransport::Try(const ControlCall& call, const Message& request, Message* reply,
                              int64_t timeout_ms, const std::function<void()>* meanwhile) {
  // With a token only the lean protocol's own discovery goes over gRPC.
  const bool by_row = options_.token && !call.lean && call.row != RpcMethod::kControlEndpoints;
  Status why;
  std::shared_ptr<ControlChannel> channel = call.lean || by_row ? Channel(&why) : nullptr;
  if (!channel) {
    if (!options_.token || call.row == RpcMethod::kControlEndpoints) {
      return grpc_.Try(call, request, reply, timeout_ms, meanwhile);
    }
    if (why.ok()) why = Status(ErrorCode::kUnavailable, "lean control connection not ready");
    return {why, why.code() == ErrorCode::kUnavailable};
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Status s;
  if (by_row) {
    if (meanwhile != nullptr && *meanwhile) (*meanwhile)();
    s = CallByRow(*channel, call, request, reply, deadline);
  } else {
    s = channel->Call(*call.lean, request, reply, deadline, meanwhile);
  }
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
