#include "transfer/wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/hex_for_test.h"

namespace crescent::transfer::wire {
namespace {

RequestHeader SampleWrite() {
  RequestHeader h;
  h.request_id = 0x0102030405060708ull;
  h.cap.segment = 0xa1b2c3d4;
  h.cap.offset = 1ull << 40;
  h.cap.length = 4 << 20;
  h.cap.op = AccessOp::kWrite;
  h.cap.expiry_unix_ms = -5;  // signed field survives
  for (size_t i = 0; i < h.cap.tag.size(); ++i) h.cap.tag[i] = static_cast<uint8_t>(i * 7);
  h.payload_length = h.cap.length;
  return h;
}

// The mark never exceeds what is still owed (a higher one is never reached),
// is 1 for the last 64 KiB, and steps by the cap it is given.
TEST(WireTest, PayloadLowatStepsAndNeverExceedsWhatIsOwed) {
  constexpr uint64_t kFrom = 64 << 10;
  for (uint64_t step : {kSharedLaneMark, kLoneLaneMark}) {
    SCOPED_TRACE(step);
    EXPECT_EQ(PayloadLowat(0, step), 1);
    EXPECT_EQ(PayloadLowat(1, step), 1);
    EXPECT_EQ(PayloadLowat(kFrom, step), 1);
    EXPECT_EQ(PayloadLowat(kFrom + 1, step), static_cast<int>(kFrom + 1));
    EXPECT_EQ(PayloadLowat(step, step), static_cast<int>(step));
    EXPECT_EQ(PayloadLowat(step + 1, step), static_cast<int>(step));
    EXPECT_EQ(PayloadLowat(uint64_t{1} << 40, step), static_cast<int>(step));
    for (uint64_t left = 1; left < 3 * step; left += 4093) {
      EXPECT_LE(static_cast<uint64_t>(PayloadLowat(left, step)), left);
    }
  }
  EXPECT_EQ(PayloadLowat(4 << 20), static_cast<int>(kSharedLaneMark));  // the default
  EXPECT_LT(kLoneLaneMark, kSharedLaneMark);
}

TEST(WireTest, RequestRoundTrip) {
  RequestHeader h = SampleWrite();
  RequestBytes bytes;
  EncodeRequest(h, bytes);
  // Little-endian on the wire regardless of host order.
  EXPECT_EQ(bytes[8], 0x08);
  EXPECT_EQ(bytes[15], 0x01);
  StatusOr<RequestHeader> d = DecodeRequest(bytes.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->request_id, h.request_id);
  EXPECT_EQ(d->cap.segment, h.cap.segment);
  EXPECT_EQ(d->cap.offset, h.cap.offset);
  EXPECT_EQ(d->cap.length, h.cap.length);
  EXPECT_EQ(d->cap.op, h.cap.op);
  EXPECT_EQ(d->cap.expiry_unix_ms, h.cap.expiry_unix_ms);
  EXPECT_EQ(d->cap.tag, h.cap.tag);
  EXPECT_EQ(d->payload_length, h.payload_length);

  h.cap.op = AccessOp::kRead;
  h.payload_length = 0;
  EncodeRequest(h, bytes);
  d = DecodeRequest(bytes.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->cap.op, AccessOp::kRead);
}

// The bytes of each frame as the data plane sent them before the shared codec
// (common/coding.h): peers of either build understand each other.
TEST(WireTest, FramesAreTheGoldenBytes) {
  RequestBytes request;
  EncodeRequest(SampleWrite(), request);
  EXPECT_EQ(HexForTest(request.data(), request.size()),
            "43525131010200000807060504030201d4c3b2a10000000000000000000100000000400000000000"
            "fbffffffffffffff00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9"
            "0000400000000000");
  auto decoded = DecodeRequest(request.data());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->request_id, SampleWrite().request_id);

  ResponseBytes response;
  size_t n =
      EncodeResponse(ErrorCode::kCapabilityInvalid, 0x1122334455667788ull, 0, "nope", response);
  EXPECT_EQ(HexForTest(response.data(), n),
            "435253310e0000008877665544332211000000000000000004000000000000006e6f7065");
  n = EncodeResponse(ErrorCode::kOk, 7, uint64_t{5} << 33, {}, response);
  EXPECT_EQ(HexForTest(response.data(), n),
            "43525331000000000700000000000000000000000a0000000000000000000000");

  ControlBytes control;
  EncodeControl({.method = 9, .request_id = 0xa0b0c0d0e0f00102ull, .body_length = 70000},
                control.data());
  EXPECT_EQ(HexForTest(control.data(), control.size()),
            "43435131010900000201f0e0d0c0b0a07011010000000000");

  CopyTarget t;
  t.endpoint = "10.0.0.2:7000";
  t.cap.segment = 0x10002;
  t.cap.offset = 4096;
  t.cap.length = 65536;
  t.cap.expiry_unix_ms = -2;
  for (size_t i = 0; i < t.cap.tag.size(); ++i) t.cap.tag[i] = static_cast<uint8_t>(0xf0 - i);
  const std::vector<uint8_t> target = EncodeCopyTarget(t);
  EXPECT_EQ(HexForTest(target.data(), target.size()),
            "020001000d00000000100000000000000000010000000000fefffffffffffffff0efeeedecebeae9"
            "e8e7e6e5e4e3e2e1e0dfdedddcdbdad9d8d7d6d5d4d3d2d131302e302e302e323a37303030");
}

TEST(WireTest, RequestRejects) {
  RequestBytes good;
  EncodeRequest(SampleWrite(), good);
  auto expect_bad = [](RequestBytes b, const char* what) {
    StatusOr<RequestHeader> d = DecodeRequest(b.data());
    ASSERT_FALSE(d.ok()) << what;
    EXPECT_EQ(d.status().code(), ErrorCode::kParseError) << what;
    EXPECT_NE(d.status().message().find(what), std::string::npos) << d.status().message();
  };
  RequestBytes b = good;
  b[0] ^= 0xff;
  expect_bad(b, "magic");
  b = good;
  b[4] = 9;
  expect_bad(b, "version");
  b = good;
  b[5] = 9;
  expect_bad(b, "unknown op");
  b = good;
  b[6] = 1;
  expect_bad(b, "reserved");
  b = good;
  b[80] ^= 1;  // write payload != cap.length
  expect_bad(b, "payload length");
  RequestHeader read = SampleWrite();
  read.cap.op = AccessOp::kRead;  // a read must not carry a payload
  EncodeRequest(read, b);
  expect_bad(b, "payload length");
  RequestBytes garbage;
  garbage.fill(0xab);
  EXPECT_FALSE(DecodeRequest(garbage.data()).ok());
}

TEST(WireTest, CopyAndVerifyRequestsCarryTheirOwnPayloads) {
  CopyTarget t;
  t.endpoint = "10.0.0.2:7000;shm=x;epoch=1f";
  t.cap.segment = 0x10002;
  t.cap.offset = 4096;
  t.cap.length = 65536;
  t.cap.expiry_unix_ms = 123456789;
  for (size_t i = 0; i < t.cap.tag.size(); ++i) t.cap.tag[i] = static_cast<uint8_t>(i + 1);
  std::vector<uint8_t> bytes = EncodeCopyTarget(t);
  EXPECT_EQ(bytes.size(), kCopyTargetFixed + t.endpoint.size());
  StatusOr<CopyTarget> back = DecodeCopyTarget(bytes.data(), bytes.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->endpoint, t.endpoint);
  EXPECT_EQ(back->cap.segment, t.cap.segment);
  EXPECT_EQ(back->cap.offset, t.cap.offset);
  EXPECT_EQ(back->cap.length, t.cap.length);
  EXPECT_EQ(back->cap.expiry_unix_ms, t.cap.expiry_unix_ms);
  EXPECT_EQ(back->cap.tag, t.cap.tag);
  EXPECT_EQ(back->cap.op, AccessOp::kWrite) << "a copy writes its target";
  // A truncated target, or one whose endpoint length lies, is refused.
  EXPECT_FALSE(DecodeCopyTarget(bytes.data(), kCopyTargetFixed - 1).ok());
  EXPECT_FALSE(DecodeCopyTarget(bytes.data(), bytes.size() - 1).ok());

  RequestHeader h = SampleWrite();
  h.cap.op = AccessOp::kCopy;
  h.payload_length = bytes.size();
  RequestBytes rb;
  EncodeRequest(h, rb);
  StatusOr<RequestHeader> d = DecodeRequest(rb.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->cap.op, AccessOp::kCopy);
  EXPECT_EQ(d->payload_length, bytes.size());
  h.payload_length = kCopyTargetMax + 1;  // no unbounded payload
  EncodeRequest(h, rb);
  EXPECT_FALSE(DecodeRequest(rb.data()).ok());

  h.cap.op = AccessOp::kVerify;
  h.payload_length = kVerifyPayload;
  EncodeRequest(h, rb);
  d = DecodeRequest(rb.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->cap.op, AccessOp::kVerify);
  h.payload_length = h.cap.length;  // a verify carries its checksum, never the value
  EncodeRequest(h, rb);
  EXPECT_FALSE(DecodeRequest(rb.data()).ok());
}

TEST(WireTest, ResponseRoundTripWithMessage) {
  ResponseBytes bytes;
  size_t n = EncodeResponse(ErrorCode::kCapabilityInvalid, 42, 0, "nope", bytes);
  EXPECT_EQ(n, kResponseHeaderSize + 4);
  StatusOr<ResponseHeader> d = DecodeResponse(bytes.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->code, ErrorCode::kCapabilityInvalid);
  EXPECT_EQ(d->request_id, 42u);
  EXPECT_EQ(d->payload_length, 0u);
  EXPECT_EQ(d->message_length, 4);
  EXPECT_EQ(std::memcmp(bytes.data() + kResponseHeaderSize, "nope", 4), 0);

  n = EncodeResponse(ErrorCode::kOk, 7, 1 << 22, {}, bytes);
  EXPECT_EQ(n, kResponseHeaderSize);
  d = DecodeResponse(bytes.data());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->code, ErrorCode::kOk);
  EXPECT_EQ(d->payload_length, 1u << 22);
}

TEST(WireTest, LongMessagesAreTruncated) {
  ResponseBytes bytes;
  std::string long_message(1000, 'x');
  size_t n = EncodeResponse(ErrorCode::kInternal, 1, 0, long_message, bytes);
  EXPECT_EQ(n, kResponseHeaderSize + kMaxErrorMessage);
  StatusOr<ResponseHeader> d = DecodeResponse(bytes.data());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->message_length, kMaxErrorMessage);
}

TEST(WireTest, ResponseRejects) {
  ResponseBytes good;
  EncodeResponse(ErrorCode::kCapabilityInvalid, 1, 0, "x", good);
  ResponseBytes b = good;
  b[1] ^= 1;
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
  b = good;
  b[24] = 0xff;  // message length 255 + 256 > bound
  b[25] = 0x01;
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
  b = good;
  b[16] = 1;  // error with a payload
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
  b = good;
  b[7] = 0x80;  // negative code
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
  b = good;
  b[30] = 1;
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
  EncodeResponse(ErrorCode::kOk, 1, 0, "", b);
  b[24] = 1;  // OK with a message
  EXPECT_EQ(DecodeResponse(b.data()).status().code(), ErrorCode::kParseError);
}

}  // namespace
}  // namespace crescent::transfer::wire
