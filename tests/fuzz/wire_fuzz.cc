// Fuzzes the TCP data plane's frame decoder (transfer/wire.h), and the lean
// control protocol's headers, which share its framing, in both directions.
//
// Invariants checked on every input:
//  - Decoding never reads past the fixed header, never crashes.
//  - An accepted frame is canonical: encoding what was decoded gives back the
//    very same bytes (the decoder drops nothing, and rejects every byte it
//    cannot represent, such as nonzero reserved bytes).
//  - Encoding a header built from fuzzed fields and decoding it gives back the
//    same fields, and the decoder accepts it exactly when the fields are legal.
//    Legal is this file's own model of wire.h's contract (LegalRequest), not a
//    call into the decoder: the four ops, each with the payload it must declare.
//  - Both directions of the lean control protocol bound what they make room
//    for: a request header is refused past the master's body limit, and a
//    control answer's body (ControlAnswerBody, what the client reads) is
//    never more than the client's limit or an error text's.
//  - The bytes as a stream of control frames, read in pieces into a
//    FrameBuffer as the server reads them: the frames come out as one parse of
//    the whole stream gives them, and the buffer never holds more than twice
//    the bytes pending plus one step, whatever the headers claim.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "transfer/frame_buffer.h"
#include "transfer/wire.h"

namespace w = crescent::transfer::wire;
using crescent::ErrorCode;
using crescent::fuzz::FuzzInput;
using crescent::transfer::AccessOp;

namespace {

bool KnownOp(AccessOp op) {
  return op == AccessOp::kRead || op == AccessOp::kWrite || op == AccessOp::kCopy ||
         op == AccessOp::kVerify;
}

// The payload a request declares (wire.h): none for a read, the capability's
// length for a write, the copy target (its fixed part and an endpoint of at
// most 512 bytes) for a copy, an 8-byte hash for a verify.
bool LegalRequest(AccessOp op, uint64_t cap_length, uint64_t payload) {
  switch (op) {
    case AccessOp::kRead: return payload == 0;
    case AccessOp::kWrite: return payload == cap_length;
    case AccessOp::kCopy: return payload >= w::kCopyTargetFixed && payload <= w::kCopyTargetMax;
    case AccessOp::kVerify: return payload == w::kVerifyPayload;
  }
  return false;
}

void CheckSameRequest(const w::RequestHeader& a, const w::RequestHeader& b) {
  FUZZ_CHECK(a.request_id == b.request_id);
  FUZZ_CHECK(a.payload_length == b.payload_length);
  FUZZ_CHECK(a.cap.segment == b.cap.segment);
  FUZZ_CHECK(a.cap.offset == b.cap.offset);
  FUZZ_CHECK(a.cap.length == b.cap.length);
  FUZZ_CHECK(a.cap.op == b.cap.op);
  FUZZ_CHECK(a.cap.expiry_unix_ms == b.cap.expiry_unix_ms);
  FUZZ_CHECK(a.cap.tag == b.cap.tag);
  // Fields this list does not name still have to survive the trip.
  w::RequestBytes ea, eb;
  w::EncodeRequest(a, ea);
  w::EncodeRequest(b, eb);
  FUZZ_CHECK(ea == eb);
}

// Raw bytes as a request header: accepted ones re-encode to themselves.
void DecodeRawRequest(const uint8_t* data, size_t size) {
  if (size < w::kRequestHeaderSize) return;
  auto h = w::DecodeRequest(data);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().code() == ErrorCode::kParseError);
    return;
  }
  FUZZ_CHECK(KnownOp(h->cap.op));
  FUZZ_CHECK(LegalRequest(h->cap.op, h->cap.length, h->payload_length));
  w::RequestBytes again;
  w::EncodeRequest(*h, again);
  FUZZ_CHECK(std::memcmp(again.data(), data, w::kRequestHeaderSize) == 0);
}

// Raw bytes as a response header (and the error text after it).
void DecodeRawResponse(const uint8_t* data, size_t size) {
  if (size < w::kResponseHeaderSize) return;
  auto h = w::DecodeResponse(data);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().code() == ErrorCode::kParseError);
    return;
  }
  FUZZ_CHECK(h->message_length <= w::kMaxErrorMessage);
  FUZZ_CHECK(h->code == ErrorCode::kOk ? h->message_length == 0 : h->payload_length == 0);
  // The text is the bytes after the header; a short input stands in zeros.
  std::string message(h->message_length, '\0');
  size_t have = std::min<size_t>(h->message_length, size - w::kResponseHeaderSize);
  std::memcpy(message.data(), data + w::kResponseHeaderSize, have);
  w::ResponseBytes again;
  size_t n = w::EncodeResponse(h->code, h->request_id, h->payload_length, message, again);
  FUZZ_CHECK(n == w::kResponseHeaderSize + h->message_length);
  FUZZ_CHECK(std::memcmp(again.data(), data, w::kResponseHeaderSize) == 0);
}

// Raw bytes as a control request header: accepted ones re-encode to themselves.
void DecodeRawControl(const uint8_t* data, size_t size) {
  if (size < w::kControlHeaderSize) return;
  auto h = w::DecodeControl(data);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().code() == ErrorCode::kParseError);
    return;
  }
  uint8_t again[w::kControlHeaderSize];
  w::EncodeControl(*h, again);
  FUZZ_CHECK(std::memcmp(again, data, w::kControlHeaderSize) == 0);
}

// Limits a reader may run under: none to speak of, a small one, the default.
constexpr uint64_t kLimits[] = {0, 1000, 64 << 20};

// Raw bytes as a control request header under each limit: refused exactly
// when the body is over it (and the header is otherwise fine).
void DecodeRawControlLimited(const uint8_t* data, size_t size) {
  if (size < w::kControlHeaderSize) return;
  auto unlimited = w::DecodeControl(data);
  for (uint64_t limit : kLimits) {
    auto h = w::DecodeControl(data, static_cast<uint32_t>(limit));
    if (!unlimited.ok()) {
      FUZZ_CHECK(!h.ok() && h.status().code() == ErrorCode::kParseError);
      continue;
    }
    FUZZ_CHECK(h.ok() == (unlimited->body_length <= limit));
    if (!h.ok()) FUZZ_CHECK(h.status().code() == ErrorCode::kInvalidArgument);
  }
}

// Raw bytes as a control answer's header, as the client reads it: the body
// it makes room for is within its limit (or an error text's), so the frame's
// length cannot wrap.
void DecodeRawAnswer(const uint8_t* data, size_t size) {
  if (size < w::kResponseHeaderSize) return;
  auto h = w::DecodeResponse(data);
  if (!h.ok()) return;
  for (uint64_t limit : kLimits) {
    auto body = w::ControlAnswerBody(*h, limit);
    if (h->code != ErrorCode::kOk) {
      FUZZ_CHECK(body.ok() && *body == h->message_length && *body <= w::kMaxErrorMessage);
      continue;
    }
    FUZZ_CHECK(body.ok() == (h->payload_length <= limit));
    if (body.ok()) FUZZ_CHECK(*body == h->payload_length);
    if (!body.ok()) FUZZ_CHECK(body.status().code() == ErrorCode::kParseError);
  }
}

struct Frame {
  uint8_t method;
  uint64_t request_id;
  std::string body;
  bool operator==(const Frame&) const = default;
};

// Whole control frames at the front of `bytes` under `limit`, as one parse
// of all of it; stops at the first header refused.
std::vector<Frame> ParseFrames(std::string_view bytes, uint32_t limit) {
  std::vector<Frame> out;
  while (bytes.size() >= w::kControlHeaderSize) {
    auto h = w::DecodeControl(reinterpret_cast<const uint8_t*>(bytes.data()), limit);
    if (!h.ok() || bytes.size() - w::kControlHeaderSize < h->body_length) break;
    out.push_back({h->method, h->request_id,
                   std::string(bytes.substr(w::kControlHeaderSize, h->body_length))});
    bytes.remove_prefix(w::kControlHeaderSize + h->body_length);
  }
  return out;
}

// The input, repeated, as a stream read in pieces into a FrameBuffer.
void StreamControlFrames(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const size_t repeats = 1 + data[0] % 64;  // up to 64 copies: past a few buffer steps
  const size_t piece = 1 + data[1] * 97;    // bytes per read: 1 to ~24 KiB
  std::string stream;
  for (size_t i = 0; i < repeats; ++i) stream.append(reinterpret_cast<const char*>(data), size);
  constexpr uint32_t kLimit = 1 << 20;
  const std::vector<Frame> whole = ParseFrames(stream, kLimit);

  crescent::transfer::FrameBuffer buffer;
  std::vector<Frame> read;
  size_t most_pending = 0;
  bool refused = false;
  for (size_t at = 0; at < stream.size() && !refused;) {
    std::span<char> room = buffer.Room();
    FUZZ_CHECK(room.size() >= crescent::transfer::FrameBuffer::kStep / 2);
    const size_t n = std::min({room.size(), piece, stream.size() - at});
    std::memcpy(room.data(), stream.data() + at, n);
    buffer.Filled(n);
    at += n;
    most_pending = std::max(most_pending, buffer.Pending().size());
    FUZZ_CHECK(buffer.capacity() <= 2 * most_pending + crescent::transfer::FrameBuffer::kStep);
    for (;;) {
      const std::string_view pending = buffer.Pending();
      if (pending.size() < w::kControlHeaderSize) break;
      auto h = w::DecodeControl(reinterpret_cast<const uint8_t*>(pending.data()), kLimit);
      if (!h.ok()) {
        refused = true;
        break;
      }
      const size_t frame = w::kControlHeaderSize + h->body_length;
      if (pending.size() < frame) break;
      read.push_back({h->method, h->request_id,
                      std::string(pending.substr(w::kControlHeaderSize, h->body_length))});
      buffer.Consume(frame);
    }
  }
  FUZZ_CHECK(read == whole);
}

// Fuzzed control fields through EncodeControl and back: always accepted.
void RoundTripControl(FuzzInput& in) {
  w::ControlHeader h;
  h.method = in.Take<uint8_t>();
  h.request_id = in.Take<uint64_t>();
  h.body_length = in.Take<uint32_t>();
  uint8_t bytes[w::kControlHeaderSize];
  w::EncodeControl(h, bytes);
  auto back = w::DecodeControl(bytes);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back->method == h.method && back->request_id == h.request_id &&
             back->body_length == h.body_length);
}

// Fuzzed fields through EncodeRequest and back.
void RoundTripRequest(FuzzInput& in) {
  w::RequestHeader h;
  h.request_id = in.Take<uint64_t>();
  uint8_t op = in.Take<uint8_t>();
  h.cap.op = static_cast<AccessOp>(op);
  h.cap.segment = in.Take<uint32_t>();
  h.cap.offset = in.Take<uint64_t>();
  h.cap.length = in.Take<uint64_t>();
  h.cap.expiry_unix_ms = in.Take<int64_t>();
  in.TakeBytes(h.cap.tag.data(), h.cap.tag.size());
  // Mostly a legal payload length for the op; sometimes a fuzzed one.
  const uint8_t pick = in.Take<uint8_t>();
  uint64_t legal_payload = 0;
  if (h.cap.op == AccessOp::kWrite) legal_payload = h.cap.length;
  if (h.cap.op == AccessOp::kCopy) legal_payload = w::kCopyTargetFixed + (pick >> 1);  // 0-127 B endpoint
  if (h.cap.op == AccessOp::kVerify) legal_payload = w::kVerifyPayload;
  h.payload_length = (pick & 1) ? in.Take<uint64_t>() : legal_payload;
  w::RequestBytes bytes;
  w::EncodeRequest(h, bytes);
  auto back = w::DecodeRequest(bytes.data());
  FUZZ_CHECK(back.ok() == (KnownOp(h.cap.op) && LegalRequest(h.cap.op, h.cap.length,
                                                              h.payload_length)));
  if (back.ok()) CheckSameRequest(h, *back);
}

void RoundTripResponse(FuzzInput& in) {
  auto code = static_cast<ErrorCode>(in.Take<int32_t>());
  uint64_t request_id = in.Take<uint64_t>();
  uint64_t payload_length = in.Take<uint64_t>();
  std::string message = in.TakeString(255);
  if (in.Take<uint8_t>() == 0xff) message.resize(w::kMaxErrorMessage + 40, 'x');  // truncated
  w::ResponseBytes bytes;
  size_t n = w::EncodeResponse(code, request_id, payload_length, message, bytes);
  size_t kept = std::min(message.size(), w::kMaxErrorMessage);
  FUZZ_CHECK(n == w::kResponseHeaderSize + kept);
  FUZZ_CHECK(std::memcmp(bytes.data() + w::kResponseHeaderSize, message.data(), kept) == 0);
  auto back = w::DecodeResponse(bytes.data());
  bool legal =
      static_cast<int32_t>(code) >= 0 && (code == ErrorCode::kOk ? kept == 0 : payload_length == 0);
  FUZZ_CHECK(back.ok() == legal);
  if (!back.ok()) return;
  FUZZ_CHECK(back->code == code);
  FUZZ_CHECK(back->request_id == request_id);
  FUZZ_CHECK(back->payload_length == payload_length);
  FUZZ_CHECK(back->message_length == kept);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  DecodeRawRequest(data, size);
  DecodeRawResponse(data, size);
  DecodeRawControl(data, size);
  DecodeRawControlLimited(data, size);
  DecodeRawAnswer(data, size);
  StreamControlFrames(data, size);
  FuzzInput in(data, size);
  RoundTripRequest(in);
  RoundTripResponse(in);
  RoundTripControl(in);
  return 0;
}
