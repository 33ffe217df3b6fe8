// Leadership: one candidate's hold on a leader key in etcd, the way the masters
// of one cluster choose who leads. The key is created only where it is absent
// (its create revision 0) under a lease of this candidate that a thread of its
// own keeps alive; the key's create revision is then the fencing revision:
// every write the leader makes is a transaction that compares it (GuardedTxn),
// so once the lease ended and another candidate created the key anew, a late
// write of the old leader fails in etcd whatever its own clock says.
//
// Held() answers whether the lease surely still lives: the last keep-alive
// that etcd answered was sent less than the TTL ago (etcd counts the TTL from
// when it renewed, which is after the send). A stalled etcd, or a lost
// network, makes it false within one TTL, before any other candidate can take
// the key.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "crescent/status.h"
#include "etcd/etcd_client.h"

namespace crescent::etcd {

struct LeadershipOptions {
  std::string key;                      // the leader key, e.g. "/crescent/NAME/leader"
  std::string value;                    // what the key holds at first (Publish changes it)
  std::chrono::milliseconds ttl{2000};  // the lease's; etcd rounds up to whole seconds, min 2 s
};

class Leadership {
 public:
  // Waits until this candidate holds the key; TIMEOUT at `deadline` (its lease
  // is then revoked), or the error that stopped it.
  static StatusOr<std::unique_ptr<Leadership>> Campaign(std::shared_ptr<EtcdClient> etcd,
                                                        LeadershipOptions options,
                                                        Clock::time_point deadline);
  ~Leadership();  // Resign()s

  int64_t revision() const;  // the key's create revision: the fence
  int64_t lease() const;
  std::chrono::milliseconds ttl() const;  // as etcd granted it
  bool Held() const;

  // `txn` run only while the key is still this leadership's: its compares
  // gain the fence's. Not succeeded: either the txn's own compares failed or
  // the key is no longer ours (then Held() is false from now on, and the
  // reply's first response is the fence's range, empty or another's key).
  StatusOr<etcdserverpb::TxnResponse> GuardedTxn(etcdserverpb::TxnRequest txn);
  // Changes the key's value (what followers read, e.g. the leader's
  // endpoints once it is ready to serve), under the fence.
  Status Publish(const std::string& value);
  // Stops keeping the lease alive and revokes it: the key goes at once.
  // Idempotent.
  void Resign();
  // Stops keeping the lease alive without a word to etcd, as a frozen or cut
  // off leader would (tests).
  void StopKeepAlive();

 private:
  struct Impl;
  explicit Leadership(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::etcd
