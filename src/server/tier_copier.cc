#include "server/tier_copier.h"

#include "common/clock.h"
#include "transfer/tcp_transport.h"
#include "transfer/wire.h"

namespace crescent::server {

TierCopier::TierCopier(const transfer::CapabilitySigner& signer) : signer_(signer) {
  transfer::TcpTransportOptions options;
  options.lanes = 2;
  options.stop = &closed_;
  tcp_ = transfer::MakeTcpTransport(options);
}

void TierCopier::Close() { closed_.store(true, std::memory_order_release); }

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
    op.request_payload_bytes = targets.back().size();
    ops.push_back(std::move(op));
  }
  return Execute(ops, deadline_unix_ms);
}

std::vector<Status> TierCopier::Verify(std::span<const master::ReplicaCheck> checks,
                                       int64_t deadline_unix_ms) {
  std::vector<uint64_t> sums;
  sums.reserve(checks.size());
  std::vector<transfer::TransferOp> ops;
  ops.reserve(checks.size());
  for (const master::ReplicaCheck& c : checks) {
    sums.push_back(c.checksum);  // little-endian on the wire, as in memory here
    transfer::TransferOp op;
    op.endpoint = c.replica.endpoint;
    op.cap = signer_.Sign(c.replica.endpoint, c.replica.segment, c.replica.offset,
                          c.replica.length, transfer::AccessOp::kVerify, deadline_unix_ms);
    op.buffer = reinterpret_cast<std::byte*>(&sums.back());
    op.request_payload_bytes = sizeof(uint64_t);
    ops.push_back(std::move(op));
  }
  return Execute(ops, deadline_unix_ms);
}

std::vector<Status> TierCopier::Execute(std::span<const transfer::TransferOp> ops,
                                        int64_t deadline_unix_ms) {
  const int64_t left_ms = deadline_unix_ms - UnixNowMs();
  if (left_ms <= 0) {
    return std::vector<Status>(ops.size(), Status(ErrorCode::kTimeout, "no time left"));
  }
  // The timeout bounds each op (transport.h), so a batch may run past the
  // deadline; its capabilities do not: a node refuses an op that starts after
  // them and stops one that outlives them, so no copy lands later.
  return tcp_->Execute(ops, left_ms);
}

}  // namespace crescent::server
