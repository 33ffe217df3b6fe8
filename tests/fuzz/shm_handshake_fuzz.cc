// Fuzzes the shared-memory handshake codec (transfer/shm_protocol.h): the
// capability a client presents and the reply the node sends back.
//
// Invariants:
//  - An accepted request is canonical: re-encoding the decoded request gives
//    back the input bytes; its op is read or write, a write request carries a
//    write capability and an address, a map request no address, a writev
//    request a write capability and 1 to kMaxWriteSlices slices.
//  - An accepted writev slice table has that many slices, each with an address
//    and non-empty, summing to the capability's length, and re-encodes to the
//    same bytes.
//  - An accepted reply re-encodes to the same header and message bytes, and its
//    message is at most kMaxMessage bytes.
//  - Encoding fuzzed fields and decoding them gives the same fields back
//    (a reply's message truncated to kMaxMessage).
#include <algorithm>
#include <cstring>

#include "fuzz_support.h"
#include "transfer/shm_protocol.h"

namespace shm = crescent::transfer::shm;
using crescent::ErrorCode;
using crescent::fuzz::FuzzInput;
using crescent::transfer::AccessOp;
using crescent::transfer::Capability;

namespace {

void DecodeRawRequest(FuzzInput& in) {
  uint8_t bytes[shm::kRequestBytes];
  in.TakeBytes(bytes, sizeof bytes);
  shm::Request req;
  if (!shm::DecodeRequest(bytes, req)) return;
  FUZZ_CHECK(req.cap.op == AccessOp::kRead || req.cap.op == AccessOp::kWrite);
  FUZZ_CHECK(req.kind == shm::Kind::kMap || req.kind == shm::Kind::kWrite ||
             req.kind == shm::Kind::kWriteV);
  if (req.kind == shm::Kind::kMap) {
    FUZZ_CHECK(req.address == 0);
  } else {
    FUZZ_CHECK(req.address != 0 && req.cap.op == AccessOp::kWrite);
  }
  uint8_t again[shm::kRequestBytes];
  shm::EncodeRequest(req, again);
  FUZZ_CHECK(std::memcmp(again, bytes, sizeof bytes) == 0);
  if (req.kind != shm::Kind::kWriteV) return;
  FUZZ_CHECK(req.address <= shm::kMaxWriteSlices);
  // Its slice table, from the rest of the input.
  std::string table = in.TakeString(static_cast<size_t>(req.address) * shm::kSliceBytes);
  if (!shm::DecodeSlices(reinterpret_cast<const uint8_t*>(table.data()), table.size(), req)) {
    return;
  }
  FUZZ_CHECK(req.slices.size() == req.address);
  uint64_t sum = 0;
  for (const shm::Request::Slice& slice : req.slices) {
    FUZZ_CHECK(slice.address != 0 && slice.length != 0);
    sum += slice.length;
  }
  FUZZ_CHECK(sum == req.cap.length);
  std::string back;
  shm::AppendSlices(req, back);
  FUZZ_CHECK(back == table);
}

void DecodeRawReply(FuzzInput& in) {
  uint8_t bytes[shm::kReplyBytes];
  in.TakeBytes(bytes, sizeof bytes);
  shm::Reply reply;
  if (!shm::DecodeReply(bytes, reply)) return;
  FUZZ_CHECK(reply.message.size() <= shm::kMaxMessage);
  uint8_t again[shm::kReplyBytes];
  shm::EncodeReply(reply, again);
  // Bytes past the message are padding the decoder ignores.
  size_t used = shm::kReplyBytes - shm::kMaxMessage + reply.message.size();
  FUZZ_CHECK(std::memcmp(again, bytes, used) == 0);
}

void RoundTripRequest(FuzzInput& in) {
  Capability cap;
  cap.segment = in.Take<uint32_t>();
  cap.offset = in.Take<uint64_t>();
  cap.length = in.Take<uint64_t>();
  cap.op = in.Take<uint8_t>() & 1 ? AccessOp::kWrite : AccessOp::kRead;
  cap.expiry_unix_ms = in.Take<int64_t>();
  in.TakeBytes(cap.tag.data(), cap.tag.size());
  shm::Request req{cap, shm::Kind::kMap, 0, {}};
  if (in.Take<uint8_t>() & 1) {  // a valid write request: a write capability and an address
    req.kind = shm::Kind::kWrite;
    req.cap.op = AccessOp::kWrite;
    req.address = in.Take<uint64_t>() | 1;
    cap = req.cap;
  }
  uint8_t bytes[shm::kRequestBytes];
  shm::EncodeRequest(req, bytes);
  shm::Request back_req;
  FUZZ_CHECK(shm::DecodeRequest(bytes, back_req));
  FUZZ_CHECK(back_req.kind == req.kind && back_req.address == req.address);
  const Capability& back = back_req.cap;
  FUZZ_CHECK(back.segment == cap.segment);
  FUZZ_CHECK(back.offset == cap.offset);
  FUZZ_CHECK(back.length == cap.length);
  FUZZ_CHECK(back.op == cap.op);
  FUZZ_CHECK(back.expiry_unix_ms == cap.expiry_unix_ms);
  FUZZ_CHECK(back.tag == cap.tag);
  // Fields this list does not name still have to survive the trip.
  uint8_t again[shm::kRequestBytes];
  shm::EncodeRequest(back_req, again);
  FUZZ_CHECK(std::memcmp(again, bytes, sizeof bytes) == 0);
}

void RoundTripReply(FuzzInput& in) {
  shm::Reply reply;
  reply.code = static_cast<ErrorCode>(in.Take<int32_t>());
  reply.segment = in.Take<uint32_t>();
  reply.size = in.Take<uint64_t>();
  reply.message = in.TakeString(255);  // may exceed kMaxMessage: truncated
  uint8_t bytes[shm::kReplyBytes];
  shm::EncodeReply(reply, bytes);
  shm::Reply back;
  FUZZ_CHECK(shm::DecodeReply(bytes, back));
  FUZZ_CHECK(back.code == reply.code);
  FUZZ_CHECK(back.segment == reply.segment);
  FUZZ_CHECK(back.size == reply.size);
  FUZZ_CHECK(back.message == reply.message.substr(0, shm::kMaxMessage));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks what the rest is read as, so each codec path sees
  // inputs shaped for it.
  FuzzInput in(data, size);
  switch (in.Take<uint8_t>() % 4) {
    case 0: DecodeRawRequest(in); break;
    case 1: DecodeRawReply(in); break;
    case 2: RoundTripRequest(in); break;
    default: RoundTripReply(in); break;
  }
  return 0;
}
