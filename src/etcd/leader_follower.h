// LeaderFollower: where a cluster's leader serves, as a client or store node
// needs it (docs/ha.md, "Clients follow the leader"). Given an
// etcd://H1:2379,H2:2379/NAME address, a thread of its own reads the leader key
// (cluster_keys.h, LeaderKey) and then watches it, so that a new leader (a new
// value) or none (an empty value while a new leader gets ready, or the key
// deleted when a leader's lease ends) is known as soon as etcd says so; every
// change goes to the listeners.
//
// While etcd cannot be read, the leader last known stays the answer (a master
// that leads does not stop because a client lost etcd); the thread reads
// again with backoff. A caller that finds the leader failing asks Recheck(),
// which reads the key at once (a stalled etcd member keeps a watch silent).
// Every view of the key carries the etcd revision it was true at, and an
// older one never replaces a newer one.
//
// Thread-safe. The destructor stops the thread at once, or within one etcd
// call (EtcdOptions::call_timeout) while one is under way.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "crescent/status.h"
#include "etcd/cluster_keys.h"
#include "etcd/etcd_client.h"

namespace crescent::etcd {

struct FollowerOptions {
  std::chrono::milliseconds call_timeout{1000};  // each etcd call's (EtcdOptions)
  std::chrono::milliseconds retry_initial{50};   // after etcd failed, the thread reads again
  std::chrono::milliseconds retry_max{1000};     // after this long, doubling up to this
};

// The leader at one view of the key.
struct FollowedLeader {
  LeaderInfo info;
  uint64_t generation = 0;  // counts the follower's changes of leader, from 1
};

class LeaderFollower {
 public:
  // Called on the follower's thread (or Recheck's caller) after each change:
  // the new leader, or nullopt when there is none. Listeners run one at a
  // time, in the order of the changes, and must not call back into the
  // follower's destructor.
  using Listener = std::function<void(const std::optional<LeaderInfo>&)>;

  // INVALID_ARGUMENT for an address that ParseEtcdAddress refuses; connects
  // lazily (the first read is under way when it returns).
  static StatusOr<std::unique_ptr<LeaderFollower>> Start(const std::string& address,
                                                         FollowerOptions options = {});
  ~LeaderFollower();

  const EtcdAddress& address() const;
  // The leader, waiting for one until `deadline` while none is published.
  // UNAVAILABLE at once when etcd cannot be read and no leader is known,
  // naming the endpoints and why; UNAVAILABLE at `deadline` when etcd says
  // there is no leader, or has not answered yet.
  StatusOr<FollowedLeader> Leader(Clock::time_point deadline);
  // The current generation (a change of leader, or to none, adds one).
  uint64_t generation() const;
  // Reads the key now (a caller found the leader unreachable): a change the
  // watch did not deliver yet is taken, and the watch is made anew. At most
  // one read at a time: a caller that finds one under way returns at once.
  void Recheck();
  void AddListener(Listener listener);

 private:
  struct Impl;
  explicit LeaderFollower(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::etcd
