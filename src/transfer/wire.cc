#include "transfer/wire.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/coding.h"

namespace crescent::transfer::wire {
namespace {

bool AllZero(const uint8_t* at, size_t n) {
  return std::all_of(at, at + n, [](uint8_t b) { return b == 0; });
}

Status Bad(const std::string& what) {
  return Status(ErrorCode::kParseError, "malformed data-plane frame: " + what);
}

}  // namespace

void EncodeRequest(const RequestHeader& h, RequestBytes& out) {
  out.fill(0);
  uint8_t* p = out.data();
  EncodeFixed32(p + 0, kRequestMagic);
  p[4] = kVersion;
  p[5] = static_cast<uint8_t>(h.cap.op);
  EncodeFixed64(p + 8, h.request_id);
  EncodeFixed32(p + 16, h.cap.segment);
  EncodeFixed64(p + 24, h.cap.offset);
  EncodeFixed64(p + 32, h.cap.length);
  EncodeFixed64(p + 40, static_cast<uint64_t>(h.cap.expiry_unix_ms));
  std::memcpy(p + 48, h.cap.tag.data(), h.cap.tag.size());
  EncodeFixed64(p + 80, h.payload_length);
}

StatusOr<RequestHeader> DecodeRequest(const uint8_t* p) {
  if (uint32_t magic = DecodeFixed32(p); magic != kRequestMagic) {
    return Bad("bad request magic " + std::to_string(magic));
  }
  if (p[4] != kVersion) {
    return Bad("unsupported version " + std::to_string(p[4]) + " (expected " +
               std::to_string(kVersion) + ")");
  }
  if (p[5] != static_cast<uint8_t>(AccessOp::kRead) &&
      p[5] != static_cast<uint8_t>(AccessOp::kWrite) &&
      p[5] != static_cast<uint8_t>(AccessOp::kCopy) &&
      p[5] != static_cast<uint8_t>(AccessOp::kVerify)) {
    return Bad("unknown op " + std::to_string(p[5]));
  }
  if (!AllZero(p + 6, 2) || !AllZero(p + 20, 4)) return Bad("reserved request bytes are not 0");
  RequestHeader h;
  h.cap.op = static_cast<AccessOp>(p[5]);
  h.request_id = DecodeFixed64(p + 8);
  h.cap.segment = DecodeFixed32(p + 16);
  h.cap.offset = DecodeFixed64(p + 24);
  h.cap.length = DecodeFixed64(p + 32);
  h.cap.expiry_unix_ms = static_cast<int64_t>(DecodeFixed64(p + 40));
  std::memcpy(h.cap.tag.data(), p + 48, h.cap.tag.size());
  h.payload_length = DecodeFixed64(p + 80);
  if (h.cap.op == AccessOp::kCopy) {
    if (h.payload_length < kCopyTargetFixed || h.payload_length > kCopyTargetMax) {
      return Bad("copy target of " + std::to_string(h.payload_length) + " bytes (expected " +
                 std::to_string(kCopyTargetFixed) + " to " + std::to_string(kCopyTargetMax) + ")");
    }
    return h;
  }
  if (h.cap.op == AccessOp::kVerify) {
    if (h.payload_length != kVerifyPayload) {
      return Bad("verify payload of " + std::to_string(h.payload_length) + " bytes (expected " +
                 std::to_string(kVerifyPayload) + ")");
    }
    return h;
  }
  uint64_t expect = h.cap.op == AccessOp::kWrite ? h.cap.length : 0;
  if (h.payload_length != expect) {
    return Bad("payload length " + std::to_string(h.payload_length) + " but expected " +
               std::to_string(expect) + " for a " +
               (h.cap.op == AccessOp::kWrite ? "write" : "read"));
  }
  return h;
}

std::vector<uint8_t> EncodeCopyTarget(const CopyTarget& t) {
  std::vector<uint8_t> out(kCopyTargetFixed + t.endpoint.size());
  uint8_t* p = out.data();
  EncodeFixed32(p + 0, t.cap.segment);
  EncodeFixed32(p + 4, static_cast<uint32_t>(t.endpoint.size()));
  EncodeFixed64(p + 8, t.cap.offset);
  EncodeFixed64(p + 16, t.cap.length);
  EncodeFixed64(p + 24, static_cast<uint64_t>(t.cap.expiry_unix_ms));
  std::memcpy(p + 32, t.cap.tag.data(), t.cap.tag.size());
  std::memcpy(p + kCopyTargetFixed, t.endpoint.data(), t.endpoint.size());
  return out;
}

StatusOr<CopyTarget> DecodeCopyTarget(const uint8_t* p, size_t n) {
  if (n < kCopyTargetFixed || n > kCopyTargetMax) {
    return Bad("copy target of " + std::to_string(n) + " bytes");
  }
  const uint32_t endpoint_bytes = DecodeFixed32(p + 4);
  if (endpoint_bytes != n - kCopyTargetFixed) {
    return Bad("copy target endpoint of " + std::to_string(endpoint_bytes) + " bytes in " +
               std::to_string(n));
  }
  CopyTarget t;
  t.cap.op = AccessOp::kWrite;
  t.cap.segment = DecodeFixed32(p + 0);
  t.cap.offset = DecodeFixed64(p + 8);
  t.cap.length = DecodeFixed64(p + 16);
  t.cap.expiry_unix_ms = static_cast<int64_t>(DecodeFixed64(p + 24));
  std::memcpy(t.cap.tag.data(), p + 32, t.cap.tag.size());
  t.endpoint.assign(reinterpret_cast<const char*>(p + kCopyTargetFixed), endpoint_bytes);
  return t;
}

void EncodeControl(const ControlHeader& h, uint8_t* p) {
  std::memset(p, 0, kControlHeaderSize);
  EncodeFixed32(p + 0, kControlMagic);
  p[4] = kVersion;
  p[5] = h.method;
  EncodeFixed64(p + 8, h.request_id);
  EncodeFixed32(p + 16, h.body_length);
}

StatusOr<ControlHeader> DecodeControl(const uint8_t* p, uint32_t max_body) {
  if (uint32_t magic = DecodeFixed32(p); magic != kControlMagic) {
    return Bad("bad control magic " + std::to_string(magic));
  }
  if (p[4] != kVersion) {
    return Bad("unsupported version " + std::to_string(p[4]) + " (expected " +
               std::to_string(kVersion) + ")");
  }
  if (!AllZero(p + 6, 2) || !AllZero(p + 20, 4)) return Bad("reserved control bytes are not 0");
  ControlHeader h;
  h.method = p[5];
  h.request_id = DecodeFixed64(p + 8);
  h.body_length = DecodeFixed32(p + 16);
  if (h.body_length > max_body) {
    return Status(ErrorCode::kInvalidArgument,
                  "control call body of " + std::to_string(h.body_length) +
                      " bytes exceeds the master's limit of " + std::to_string(max_body));
  }
  return h;
}

StatusOr<uint64_t> ControlAnswerBody(const ResponseHeader& h, uint64_t max_body) {
  if (h.code != ErrorCode::kOk) return uint64_t{h.message_length};
  if (h.payload_length > max_body) {
    return Bad("control answer of " + std::to_string(h.payload_length) +
               " bytes exceeds the client's message limit of " + std::to_string(max_body));
  }
  return h.payload_length;
}

size_t EncodeResponse(ErrorCode code, uint64_t request_id, uint64_t payload_length,
                      std::string_view message, ResponseBytes& out) {
  size_t n = std::min(message.size(), kMaxErrorMessage);
  uint8_t* p = out.data();
  std::memset(p, 0, kResponseHeaderSize);
  EncodeFixed32(p + 0, kResponseMagic);
  EncodeFixed32(p + 4, static_cast<uint32_t>(static_cast<int32_t>(code)));
  EncodeFixed64(p + 8, request_id);
  EncodeFixed64(p + 16, payload_length);
  EncodeFixed16(p + 24, static_cast<uint16_t>(n));
  if (n > 0) std::memcpy(p + kResponseHeaderSize, message.data(), n);  // data() may be null
  return kResponseHeaderSize + n;
}

StatusOr<ResponseHeader> DecodeResponse(const uint8_t* p) {
  if (uint32_t magic = DecodeFixed32(p); magic != kResponseMagic) {
    return Bad("bad response magic " + std::to_string(magic));
  }
  if (!AllZero(p + 26, 6)) return Bad("reserved response bytes are not 0");
  ResponseHeader h;
  int32_t code = static_cast<int32_t>(DecodeFixed32(p + 4));
  if (code < 0) return Bad("negative status code " + std::to_string(code));
  h.code = static_cast<ErrorCode>(code);
  h.request_id = DecodeFixed64(p + 8);
  h.payload_length = DecodeFixed64(p + 16);
  h.message_length = DecodeFixed16(p + 24);
  if (h.message_length > kMaxErrorMessage) {
    return Bad("error message of " + std::to_string(h.message_length) + " bytes exceeds " +
               std::to_string(kMaxErrorMessage));
  }
  if (h.code != ErrorCode::kOk && h.payload_length != 0) {
    return Bad("error response carries a payload");
  }
  if (h.code == ErrorCode::kOk && h.message_length != 0) {
    return Bad("OK response carries an error message");
  }
  return h;
}

}  // namespace crescent::transfer::wire
