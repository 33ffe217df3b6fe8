// How MasterClient reaches the master: a typed descriptor of each call of the
// control plane's table (calls::NAME, from CRESCENT_CONTROL_CALLS in
// control_methods.h), a ControlTransport that makes one try of a call (gRPC:
// grpc_transport.h; the lean protocol: lean_transport.h), and ControlRetry, the
// one retry loop above both. Internal to the client side of rpc/.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "crescent/status.h"
#include "rpc/control_methods.h"
#include "rpc/master.grpc.pb.h"

namespace crescent::rpc {

using Message = google::protobuf::MessageLite;

// One call of the table, its types erased.
struct ControlCall {
  const char* name;
  RpcMethod row;  // its row of the table (what ControlMethod::kCall carries)
  std::optional<ControlMethod> lean;
  // Starts the gRPC call on `stub`; its end comes to `cq` tagged `ctx`, with
  // its outcome in `*status` and its reply in `*reply`.
  void (*start_grpc)(Master::Stub& stub, grpc::ClientContext* ctx, const Message& request,
                     Message* reply, grpc::CompletionQueue* cq, grpc::Status* status);
};

// A ControlCall with its request and reply types, for typed callers.
template <typename Req, typename Resp>
struct TypedCall {
  ControlCall call;
};

namespace calls {
#define CRESCENT_CONTROL_CALL(name, Req, Resp, lean_method)                                     \
  inline constexpr TypedCall<proto::Req, proto::Resp> name{                                     \
      {#name, RpcMethod::k##name, lean_method,                                                  \
       [](Master::Stub& stub, grpc::ClientContext* ctx, const Message& request, Message* reply, \
          grpc::CompletionQueue* cq, grpc::Status* status) {                                    \
         stub.Async##name(ctx, static_cast<const proto::Req&>(request), cq)                     \
             ->Finish(static_cast<proto::Resp*>(reply), status, ctx);                           \
       }}};
CRESCENT_CONTROL_CALLS(CRESCENT_CONTROL_CALL)
#undef CRESCENT_CONTROL_CALL
}  // namespace calls

// The outcome of one try: OK; an error to return as it is; or, with `retry`,
// the master was not reached (status.message() says why) and the call may be
// tried again; with `at_once` too, without the backoff, since the next try
// goes to another master (a cluster's new leader, leader_transport.h).
struct TryOutcome {
  Status status;
  bool retry = false;
  bool at_once = false;
};

// One try of one call over one way to the master, with a deadline of
// `timeout_ms`. `meanwhile` (may be null) runs on the calling thread while the
// request is on its way. A transport that finds its connection broken
// replaces it for later tries.
class ControlTransport {
 public:
  virtual ~ControlTransport() = default;
  virtual TryOutcome Try(const ControlCall& call, const Message& request, Message* reply,
                         int64_t timeout_ms, const std::function<void()>* meanwhile) = 0;
};

// How ControlRetry::Invoke makes one call.
struct CallOptions {
  // Runs on the calling thread while the first try's request is on its way
  // (a same-host get's copy-ahead), once.
  const std::function<void()>* meanwhile = nullptr;
  // Tries at most (0: RetryOptions::attempts), for a call whose caller
  // retries on its own.
  int tries = 0;

  static CallOptions Tries(int n) {
    CallOptions o;
    o.tries = n;
    return o;
  }
};

struct RetryOptions {
  int attempts = 4;
  int64_t rpc_timeout_ms = 5000;  // each try's deadline
  int64_t backoff_initial_ms = 50;
  int64_t backoff_max_ms = 1000;
};

// The one retry loop above a transport: each try with a fresh deadline, a
// retryable failure tried again with exponential backoff, up to `attempts`
// tries, then kUnavailable naming `address`. Every try sends the same
// request, so a PutStart's put attempts repeat and a try after a lost reply
// gets that put back (PutEnd with its token is idempotent too); other retried
// calls are reads, or removes and corrupt-replica reports whose repeat
// answers OBJECT_NOT_FOUND.
class ControlRetry {
 public:
  ControlRetry(ControlTransport& transport, std::string address, RetryOptions options)
      : transport_(transport), address_(std::move(address)), options_(options) {}

  Status Invoke(const ControlCall& call, const Message& request, Message* reply,
                const CallOptions& how = {}) const;
  template <typename Req, typename Resp>
  Status Invoke(const TypedCall<Req, Resp>& call, const std::type_identity_t<Req>& request,
                std::type_identity_t<Resp>* reply, const CallOptions& how = {}) const {
    return Invoke(call.call, request, reply, how);
  }

 private:
  ControlTransport& transport_;
  const std::string address_;
  const RetryOptions options_;
};

}  // namespace crescent::rpc
