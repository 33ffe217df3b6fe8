#include "transfer/copy_executor.h"

#include <cstring>
#include <vector>

#include "common/clock.h"
#include "common/endpoint.h"
#include "transfer/tcp_transport.h"

namespace crescent::transfer {

CopyExecutor::~CopyExecutor() = default;

Status CopyExecutor::Copy(const std::byte* source, uint64_t length,
                          const SegmentMemory::Fence& source_fence,
                          const wire::CopyTarget& target) {
  if (target.cap.length != length) {
    return Status(ErrorCode::kInvalidArgument,
                  "copy of " + std::to_string(length) + " bytes into a target of " +
                      std::to_string(target.cap.length));
  }
  auto expired = [&](const char* when) {
    return Status(ErrorCode::kLeaseExpired,
                  std::string("copy capability expired (or the segment was remounted) ") + when);
  };
  SegmentMemory::Fence target_fence;
  StatusOr<SegmentSet::Resolved> local =
      segments_.Resolve(target.cap, AccessOp::kWrite, signer_, UnixNowMs(), &target_fence);
  if (local.ok()) {
    std::memcpy(local->data, source, length);
    if (!source_fence.Holds()) return expired("while its bytes were copied");
    if (!target_fence.Holds()) return expired("before the target was persisted");
    local->segment->Persist(local->data, length);
    return Status::Ok();
  }
  if (local.status().code() != ErrorCode::kSegmentNotFound) return local.status();
  // A target on this node's own port that none of its segments takes is
  // refused here: a write to ourselves would wait on our own data threads.
  StatusOr<Endpoint> self = ParseEndpoint(source_fence.binding());
  StatusOr<Endpoint> there = ParseEndpoint(target.endpoint);
  if (!there.ok()) return there.status();
  if (self.ok() && self->host == there->host && self->port == there->port) return local.status();
  // Another node's segment (or one of ours under an endpoint of another
  // mount, which that write refuses in turn).
  Transport* peer;
  {
    std::lock_guard lock(mu_);
    if (!peer_) {
      TcpTransportOptions options;
      options.lanes = 1;
      peer_ = MakeTcpTransport(options);
    }
    peer = peer_.get();
  }
  const int64_t left_ms = source_fence.expiry_unix_ms() - UnixNowMs();
  if (left_ms <= 0) return expired("before the copy started");
  TransferOp op{target.endpoint, target.cap, const_cast<std::byte*>(source)};
  std::vector<Status> done = peer->Execute({&op, 1}, left_ms);
  if (!done[0].ok()) return done[0];
  if (!source_fence.Holds()) return expired("while its bytes were sent");
  return Status::Ok();
}

}  // namespace crescent::transfer
