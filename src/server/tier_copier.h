// TierCopier: the master's ReplicaCopier (master/replica_copier.h) over the TCP
// data plane. For each copy it signs a copy capability for the source range
// and a write capability for the target range, both ending at the deadline,
// and sends the copy request to the source's node (transfer/copy_executor.h),
// a batch pipelined over one kept connection per node. A check is a verify
// request (wire.h) with a verify capability for the range. Close() ends
// every transfer at once (the transport's stop switch).
#pragma once

#include <atomic>
#include <memory>

#include "master/replica_copier.h"
#include "transfer/capability.h"
#include "transfer/transport.h"

namespace crescent::server {

class TierCopier final : public master::ReplicaCopier {
 public:
  // `signer` must outlive the copier.
  explicit TierCopier(const transfer::CapabilitySigner& signer);
  ~TierCopier() override;
  std::vector<Status> Copy(std::span<const master::ReplicaCopy> copies,
                           int64_t deadline_unix_ms) override;
  std::vector<Status> Verify(std::span<const master::ReplicaCheck> checks,
                             int64_t deadline_unix_ms) override;
  void Close() override;

 private:
  std::vector<Status> Execute(std::span<const transfer::TransferOp> ops, int64_t deadline_unix_ms);
  const transfer::CapabilitySigner& signer_;
  std::atomic<bool> closed_{false};  // tcp_'s stop switch; set once, by Close()
  std::unique_ptr<transfer::Transport> tcp_;
};

}  // namespace crescent::server
