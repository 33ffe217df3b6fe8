#include "rpc/leader_transport.h"

#include <chrono>
#include <utility>

#include "rpc/master_client_wire.h"

namespace crescent::rpc {

LeaderTransport::LeaderTransport(std::unique_ptr<etcd::LeaderFollower> follower,
                                 RouteSettings settings)
    : settings_(std::move(settings)), follower_(std::move(follower)) {
  // A change of leader drops the route to the old one at once: its
  // connections close when the calls on them end, and the next try makes the
  // route to the new leader.
  follower_->AddListener([this](const std::optional<etcd::LeaderInfo>& leader) {
    std::shared_ptr<MasterRoute> old;
    std::shared_ptr<const std::function<void()>> tell;
    {
      std::lock_guard lock(mu_);
      if (route_ && (!leader || leader->grpc != route_->address)) old = std::move(route_);
      tell = on_change_;
    }
    if (tell && *tell) (*tell)();
  });
}

void LeaderTransport::OnChange(std::function<void()> fn) {
  auto shared = std::make_shared<const std::function<void()>>(std::move(fn));
  std::lock_guard lock(mu_);
  on_change_ = std::move(shared);
}

LeaderTransport::~LeaderTransport() { follower_.reset(); }

std::shared_ptr<MasterRoute> LeaderTransport::Current() const {
  std::lock_guard lock(mu_);
  return route_;
}

StatusOr<std::shared_ptr<MasterRoute>> LeaderTransport::Route(int64_t timeout_ms) {
  {
    std::lock_guard lock(mu_);
    if (route_ && route_generation_ == follower_->generation()) return route_;
  }
  StatusOr<etcd::FollowedLeader> leader =
      follower_->Leader(etcd::Clock::now() + std::chrono::milliseconds(timeout_ms));
  if (!leader.ok()) return leader.status();
  const std::string& address = leader->info.grpc;
  std::lock_guard lock(mu_);
  if (leader->generation < route_generation_ && route_) return route_;  // a newer one won
  if (!route_ || route_->address != address) {
    if (Status s = client_wire::CheckAddress(address); !s.ok()) {
      return Status(ErrorCode::kUnavailable,
                    "the leader of cluster " + follower_->address().cluster +
                        " published an address this client cannot use: " + s.message());
    }
    StatusOr<std::shared_ptr<MasterRoute>> made = MakeMasterRoute(address, settings_);
    if (!made.ok()) return Status(ErrorCode::kUnavailable, made.status().message());
    route_ = std::move(*made);
  }
  route_generation_ = leader->generation;
  return route_;
}

TryOutcome LeaderTransport::Try(const ControlCall& call, const Message& request, Message* reply,
                                int64_t timeout_ms, const std::function<void()>* meanwhile) {
  StatusOr<std::shared_ptr<MasterRoute>> route = Route(timeout_ms);
  if (!route.ok()) return {route.status(), true};
  const uint64_t generation = follower_->generation();
  TryOutcome out = (*route)->lean->Try(call, request, reply, timeout_ms, meanwhile);
  if (out.status.ok()) return out;
  if (out.retry) {
    follower_->Recheck();
    out.at_once = follower_->generation() != generation;
    out.status =
        Status(out.status.code(), "leader at " + (*route)->address + ": " + out.status.message());
  } else if (out.status.code() == ErrorCode::kTimeout && follower_->generation() != generation) {
    out.retry = true;
    out.at_once = true;
  }
  return out;
}

}  // namespace crescent::rpc
