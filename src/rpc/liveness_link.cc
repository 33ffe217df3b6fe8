#include "rpc/liveness_link.h"

#include "rpc/convert.h"
#include "rpc/master.grpc.pb.h"

namespace crescent::rpc {

struct LivenessLink::Target {
  std::string address;  // HOST:PORT
  uint64_t instance = 0;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Liveness::Stub> stub;
};

LivenessLink::LivenessLink(std::string host, grpc::ChannelArguments args,
                           std::shared_ptr<grpc::ChannelCredentials> credentials)
    : host_(std::move(host)),
      args_(std::move(args)),
      credentials_(credentials ? std::move(credentials) : grpc::InsecureChannelCredentials()) {}

LivenessLink::~LivenessLink() = default;

void LivenessLink::Learn(uint32_t port, uint64_t instance) {
  std::shared_ptr<Target> t;
  if (port != 0) {
    t = std::make_shared<Target>();
    t->address = host_ + ":" + std::to_string(port);
    t->instance = instance;
    t->channel = grpc::CreateCustomChannel(t->address, credentials_, args_);
    if (t->channel) t->stub = Liveness::NewStub(t->channel);
    if (!t->stub) t.reset();
  }
  std::lock_guard lock(mu_);
  target_ = std::move(t);
  // A master without the service is asked again at the next mount only.
  if (port == 0) next_look_ = std::chrono::steady_clock::time_point::max();
}

bool LivenessLink::ShouldLook() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  if (target_ || now < next_look_) return false;
  next_look_ = now + std::chrono::seconds(1);
  return true;
}

std::shared_ptr<const LivenessLink::Target> LivenessLink::Current() const {
  std::lock_guard lock(mu_);
  return target_;
}

void LivenessLink::Forget(const std::shared_ptr<const Target>& used) {
  std::lock_guard lock(mu_);
  if (target_ == used) {
    target_.reset();
    next_look_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  }
}

std::optional<Status> LivenessLink::Heartbeat(const std::string& node, int64_t timeout_ms,
                                              proto::HeartbeatResponse* reply) {
  std::shared_ptr<const Target> t = Current();
  if (!t) return std::nullopt;
  proto::HeartbeatRequest req;
  req.set_node(node);
  req.set_master_instance(t->instance);
  proto::HeartbeatResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  const grpc::Status st = t->stub->Heartbeat(&ctx, req, &resp);
  if (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return Status(ErrorCode::kTimeout, "heartbeat to the master's liveness port " + t->address +
                                           ": no answer within " + std::to_string(timeout_ms) +
                                           " ms");
  }
  if (st.ok()) {
    Status s = FromProto(resp.status());
    if (s.code() != ErrorCode::kUnavailable) {  // UNAVAILABLE: another master process
      if (reply != nullptr) *reply = std::move(resp);
      return s;
    }
  }
  Forget(t);
  return std::nullopt;
}

}  // namespace crescent::rpc
