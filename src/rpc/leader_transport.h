// LeaderTransport: the control calls to whichever master leads a cluster
// (ControlTransport, control_transport.h), for a MasterClient given an
// etcd://H1:2379,H2:2379/NAME address (docs/ha.md, "Clients follow the
// leader"). A LeaderFollower (etcd/leader_follower.h) says where the leader
// serves; each try goes over the route (master_route.h) to the leader known
// when it starts, made when that leader is first used and dropped when
// another leads.
//
// A try with no leader known waits for one, up to its deadline, and is
// retryable; one that could not reach the leader (retryable) makes the
// follower read the leader key again at once, so the retry goes to a new
// leader as soon as etcd names it. A try that timed out while the leader
// changed is retryable too: its answer can no longer come. A retry that
// goes to a new leader skips the backoff (TryOutcome::at_once); otherwise
// ControlRetry's attempts and backoff apply as for one master. Internal to
// the client side of rpc/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "etcd/leader_follower.h"
#include "rpc/control_transport.h"
#include "rpc/master_route.h"

namespace crescent::rpc {

class LeaderTransport final : public ControlTransport {
 public:
  LeaderTransport(std::unique_ptr<etcd::LeaderFollower> follower, RouteSettings settings);
  ~LeaderTransport() override;

  TryOutcome Try(const ControlCall& call, const Message& request, Message* reply,
                 int64_t timeout_ms, const std::function<void()>* meanwhile) override;

  // The route to the current leader, waiting for one up to `timeout_ms`.
  StatusOr<std::shared_ptr<MasterRoute>> Route(int64_t timeout_ms);
  // The route in use now, without waiting; null when none.
  std::shared_ptr<MasterRoute> Current() const;
  // Runs `fn` after each change of leader (MasterClient::OnLeaderChange).
  void OnChange(std::function<void()> fn);

 private:
  const RouteSettings settings_;
  mutable std::mutex mu_;  // guards the three below
  std::shared_ptr<MasterRoute> route_;
  uint64_t route_generation_ = 0;  // the follower's generation `route_` is of
  std::shared_ptr<const std::function<void()>> on_change_;
  // Last: its thread, which calls the listener below, stops first.
  std::unique_ptr<etcd::LeaderFollower> follower_;
};

}  // namespace crescent::rpc
