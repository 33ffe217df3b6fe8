#include "server/tier_copier.h"

#include "common/clock.h"
#include "transfer/tcp_transport.h"
#include "transfer/wire.h"

namespace crescent::server {

TierCopier::TierCopier(const transfer::CapabilitySigner& signer) : signer_(signer) {
  transfer::TcpTransportOptions options;
  options.lanes = 2;
  tcp_ = transfer::MakeTcpTransport(options);
}

TierCopier::~TierCopier() = default;

std::vector<Status> TierCopier::Copy(std::span<const master::ReplicaCopy> copies,
                                     int64_t deadline_unix_ms) {
  std::vector<std::vector<uint8_t>> targets;
  targets.reserve(copies.size());
  std::vector<transfer::TransferOp> ops;
  ops.reserve(copies.size());
  for (const master::ReplicaCopy& c : copies) {
    transfer::wire::CopyTarget target;
    target.endpoint = c.to.endpoint;
    target.cap = signer_.Sign(c.to.endpoint, c.to.segment, c.to.offset, c.to.length,
                              transfer::AccessOp::kWrite, deadline_unix_ms);
    targets.push_back(transfer::wire::EncodeCopyTarget(target));
    transfer::TransferOp op;
    op.endpoint = c.from.endpoint;
    op.cap = signer_.Sign(c.from.endpoint, c.from.segment, c.from.offset, c.from.length,
                          transfer::AccessOp::kCopy, deadline_unix_ms);
    op.buffer = reinterpret_cast<std::byte*>(targets.back().data());
    op.copy_target_bytes = targets.back().size();
    ops.push_back(std::move(op));
  }
  const int64_t left_ms = deadline_unix_ms - UnixNowMs();
  if (left_ms <= 0) {
    return std::vector<Status>(copies.size(),
                               Status(ErrorCode::kTimeout, "no time left for the copies"));
  }
  return tcp_->Execute(ops, left_ms);
}

}  // namespace crescent::server
