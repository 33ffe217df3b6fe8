// Fuzzes capability signing and verification (transfer/capability.h), and the
// two decoders a capability arrives through (the TCP header, the shm request).
//
// Invariants, under a fixed test secret and fuzzed fields, binding and clock:
//  - Sign then Verify round-trips: OK exactly when the expiry is after now
//    (kLeaseExpired otherwise); the wrong op is kCapabilityInvalid.
//  - A fuzzed tag verifies only if it equals the one Sign computes.
//  - Changing any signed field, the binding, or the secret makes it invalid.
//  - Sign is deterministic, and a signed capability survives both wire codecs
//    and still verifies on the other side.
#include <string>

#include "fuzz_support.h"
#include "transfer/capability.h"
#include "transfer/shm_protocol.h"
#include "transfer/wire.h"

using crescent::ErrorCode;
using crescent::Status;
using crescent::fuzz::FuzzInput;
using crescent::transfer::AccessOp;
using crescent::transfer::Capability;
using crescent::transfer::CapabilitySigner;
namespace wire = crescent::transfer::wire;
namespace shm = crescent::transfer::shm;

namespace {

const std::string kSecret = "fuzz-test-secret-0123456789abcdef";

const CapabilitySigner& Signer() {
  static const CapabilitySigner signer = std::move(CapabilitySigner::Create(kSecret).value());
  return signer;
}

// The capability's fields signed again: one place to extend when Capability grows.
Capability Resign(const CapabilitySigner& signer, std::string_view binding, const Capability& c) {
  return signer.Sign(binding, c.segment, c.offset, c.length, c.op, c.expiry_unix_ms);
}

bool IsValidOp(AccessOp op) { return op == AccessOp::kRead || op == AccessOp::kWrite; }

// What Verify must say about a capability whose tag is right.
void CheckGenuine(std::string_view binding, const Capability& cap, int64_t now) {
  Status s = Signer().Verify(binding, cap, cap.op, now);
  if (cap.expiry_unix_ms > now) {
    FUZZ_CHECK(s.ok());
  } else {
    FUZZ_CHECK(s.code() == ErrorCode::kLeaseExpired);
  }
}

void CheckWireCodecs(std::string_view binding, const Capability& cap, int64_t now) {
  if (!IsValidOp(cap.op)) return;  // neither codec carries another op
  wire::RequestHeader h;
  h.cap = cap;
  h.payload_length = cap.op == AccessOp::kWrite ? cap.length : 0;
  wire::RequestBytes bytes;
  wire::EncodeRequest(h, bytes);
  auto tcp = wire::DecodeRequest(bytes.data());
  FUZZ_CHECK(tcp.ok());
  FUZZ_CHECK(tcp->cap.tag == cap.tag);
  CheckGenuine(binding, tcp->cap, now);

  uint8_t shm_bytes[shm::kRequestBytes];
  shm::EncodeRequest(shm::Request{cap, shm::Kind::kMap, 0, {}}, shm_bytes);
  shm::Request via_shm;
  FUZZ_CHECK(shm::DecodeRequest(shm_bytes, via_shm));
  FUZZ_CHECK(via_shm.cap.tag == cap.tag);
  CheckGenuine(binding, via_shm.cap, now);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  std::string binding = in.TakeString(64);
  uint32_t segment = in.Take<uint32_t>();
  uint64_t offset = in.Take<uint64_t>();
  uint64_t length = in.Take<uint64_t>();
  auto op = static_cast<AccessOp>(in.Take<uint8_t>());  // any byte, not only read/write
  int64_t expiry = in.Take<int64_t>();
  int64_t now = in.Take<int64_t>();

  const CapabilitySigner& signer = Signer();
  Capability cap = signer.Sign(binding, segment, offset, length, op, expiry);
  FUZZ_CHECK(Resign(signer, binding, cap).tag == cap.tag);
  CheckGenuine(binding, cap, now);
  auto other_op = static_cast<AccessOp>(static_cast<uint8_t>(op) ^ (in.Take<uint8_t>() | 1));
  FUZZ_CHECK(signer.Verify(binding, cap, other_op, now).code() == ErrorCode::kCapabilityInvalid);
  CheckWireCodecs(binding, cap, now);

  // A fuzzed tag over the same fields.
  Capability forged = cap;
  in.TakeBytes(forged.tag.data(), forged.tag.size());
  Status s = signer.Verify(binding, forged, op, now);
  if (forged.tag != cap.tag) FUZZ_CHECK(s.code() == ErrorCode::kCapabilityInvalid);

  // One field changed, the tag kept: never valid.
  Capability widened = cap;
  std::string other_binding = binding;
  uint64_t delta = in.Take<uint64_t>() | 1;
  switch (in.Take<uint8_t>() % 6) {
    case 0: widened.segment ^= static_cast<uint32_t>(delta); break;
    case 1: widened.offset ^= delta; break;
    case 2: widened.length ^= delta; break;
    case 3: widened.op = other_op; break;
    case 4: widened.expiry_unix_ms ^= static_cast<int64_t>(delta); break;
    default: other_binding.push_back(static_cast<char>(delta)); break;
  }
  FUZZ_CHECK(signer.Verify(other_binding, widened, widened.op, now).code() ==
             ErrorCode::kCapabilityInvalid);

  // Another secret: valid only if it is the same HMAC key. HMAC pads a key
  // shorter than SHA-256's 64-byte block with zeros, so secrets that differ
  // only in trailing NUL bytes are the same key.
  std::string secret = in.TakeString(48);
  auto other = CapabilitySigner::Create(secret);
  FUZZ_CHECK(other.ok() == (secret.size() >= CapabilitySigner::kMinSecretBytes));
  if (other.ok()) {
    Status theirs = other->Verify(binding, cap, op, now);
    auto unpadded = [](std::string s) { return s.erase(s.find_last_not_of('\0') + 1); };
    if (unpadded(secret) == kSecret) {
      FUZZ_CHECK(theirs.code() == signer.Verify(binding, cap, op, now).code());
    } else {
      FUZZ_CHECK(theirs.code() == ErrorCode::kCapabilityInvalid);
    }
  }
  return 0;
}
