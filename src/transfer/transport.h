// Transport: moves payload bytes between client memory and one replica's range of
// a store node's segment. Two implementations share this interface: TCP
// (tcp_transport.h, any host) and shared memory (shm_transport.h, same host).
//
// Contract for every implementation:
//  - An op names the replica's endpoint and carries the master's capability; the
//    capability's (segment, offset, length) is the remote range. `buffer` is the
//    client's memory; for a read it must hold at least cap.length bytes.
//  - A read never returns bytes read after cap.expiry_unix_ms: the op fails with
//    kLeaseExpired instead, because the space may have been reused.
//  - A read with checksum_out set hashes the bytes it delivers into `buffer`
//    (common/value_hash.h) as they land, never reading them back from memory
//    (TCP: each chunk while it is still in cache; shm: in the same pass as the
//    copy, copy_hash.h), and stores the XXH3-64 there when the op succeeds.
//    The caller compares it with the object's checksum.
//  - Batch ops return one Status per op in input order; they may run in parallel
//    (TCP: across lanes, pipelined). `timeout_ms` bounds each op, not the call:
//    an op fails with kTimeout when it has not finished `timeout_ms` after its
//    turn came (shm: it started; TCP: its lane answered the op before it, or
//    the call began), so a batch of many quick ops may take longer in all. A
//    dead peer yields kTimeout or kUnavailable, never a hang.
//  - An op's client memory may instead be `slices`, in order (a key's pages of
//    several layers, vLLM's and SGLang's multi-buffer calls): their lengths sum
//    to cap.length, the bytes move straight between them and the node (TCP:
//    sendmsg/recvmsg with one iovec per slice; shm: a read copies per slice, a
//    write has the node read the slices with process_vm_readv), and a
//    checksum covers them in order, as it would the one buffer they make.
//  - Thread-safe: many threads may call one transport at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "crescent/status.h"
#include "transfer/capability.h"

namespace crescent::transfer {

// One piece of an op's client memory (TransferOp::slices).
struct BufferSlice {
  std::byte* data = nullptr;
  size_t length = 0;
};
// Whether `slices` are all non-null and non-empty and sum to `length`.
bool SlicesCover(std::span<const BufferSlice> slices, uint64_t length);

struct TransferOp {
  std::string endpoint;  // as the master returned it (endpoint.h)
  Capability cap;        // op kRead: segment -> buffer; kWrite: buffer -> segment
  std::byte* buffer = nullptr;
  // Optional, kRead and kWrite: the XXH3-64 (HashValue) of the bytes read into
  // `buffer` as they land, or of the bytes written from it as they leave.
  uint64_t* checksum_out = nullptr;
  // kCopy and kVerify only (TCP; the master's tier moves and checks):
  // `buffer` holds the request's payload, this many bytes (the encoded
  // wire::CopyTarget; the expected checksum).
  uint64_t request_payload_bytes = 0;
  // kRead and kWrite, in place of `buffer` when not empty: the client memory
  // in pieces, in order (the contract above).
  std::span<const BufferSlice> slices{};
  bool HasMemory() const { return slices.empty() ? buffer != nullptr : true; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  // True when this transport can reach `endpoint` at all (shm: same host and the
  // node offers shm). Cheap after the first call per endpoint.
  virtual bool CanReach(const std::string& endpoint) = 0;
  virtual std::vector<Status> Execute(std::span<const TransferOp> ops, int64_t timeout_ms) = 0;
  virtual const char* Name() const = 0;
  // Same-host transports only: copies [offset, offset + length) of segment
  // `segment` at `endpoint` into `to` (one buffer, or a value's slices in
  // order, `length` bytes in all) while the capability for that read is
  // still on its way. The bytes mean nothing until the caller has matched the
  // capability that arrives (range, segment, expiry) and the replica's placement
  // against what it asked for here; on a mismatch it reads again normally.
  // False, with nothing copied, when this transport cannot: another host, no
  // mapping of that segment yet (only Execute makes one), a range outside it,
  // or slices that do not cover `length`.
  // `checksum_out`, when set, receives the copied bytes' XXH3-64 (as a read's).
  virtual bool CopyAhead(const std::string& endpoint, uint32_t segment, uint64_t offset,
                         uint64_t length, std::span<const BufferSlice> to,
                         uint64_t* checksum_out = nullptr) {
    (void)endpoint, (void)segment, (void)offset, (void)length, (void)to, (void)checksum_out;
    return false;
  }
  // Same-host transports only: bytes of store-node memory mapped now, and of
  // those, bytes whose pages this process has read once since (page_warmer.h:
  // until then, a first copy out of a page may trap on some VMs). A persistent
  // segment's file is mapped lazily and never read ahead: it counts as warmed
  // at once, as nothing is left to wait for.
  struct MappedMemory {
    uint64_t mapped = 0;
    uint64_t warmed = 0;
  };
  virtual MappedMemory Mapped() { return {}; }
};

// Whether a shared-memory failure is one of the path itself (the node's
// socket unreachable, its segment not mappable here) rather than of the op:
// then TCP to the same replica may still carry it. A lease, capability or
// range error would fail there too, and a timeout has used the op's time.
inline bool IsShmPathFailure(ErrorCode c) {
  return c == ErrorCode::kUnavailable || c == ErrorCode::kIoError || c == ErrorCode::kInternal;
}

// Whether a failed op says its node could not be reached at all (a refused or
// broken connection, no answer in time), as opposed to an answer that refused
// the op (capability, range, lease): the node is then suspect.
inline bool IsNodeFailure(ErrorCode c) {
  return c == ErrorCode::kUnavailable || c == ErrorCode::kTimeout;
}

}  // namespace crescent::transfer
