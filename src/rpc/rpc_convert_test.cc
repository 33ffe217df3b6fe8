// Wire conversions: statuses keep their codes, capabilities need a 32-byte tag.
#include <grpcpp/support/status.h>
#include <gtest/gtest.h>

#include "rpc/convert.h"
#include "rpc/grpc_setup.h"

namespace crescent::rpc {
namespace {

TEST(RpcConvertTest, StatusRoundTripsItsCode) {
  proto::Status wire;
  ToProto(Status(ErrorCode::kObjectLeased, "held"), &wire);
  EXPECT_EQ(wire.code(), 7);
  Status back = FromProto(wire);
  EXPECT_EQ(back.code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(back.message(), "held");
  ToProto(Status::Ok(), &wire);
  EXPECT_TRUE(FromProto(wire).ok());
  // The newest code travels too, not only those below it.
  ToProto(Status(ErrorCode::kChecksumMismatch, "bad"), &wire);
  EXPECT_EQ(wire.code(), 26);
  EXPECT_EQ(FromProto(wire).code(), ErrorCode::kChecksumMismatch);
}

TEST(RpcConvertTest, UnknownCodeIsNeverOk) {
  proto::Status wire;
  wire.set_code(999);
  EXPECT_EQ(FromProto(wire).code(), ErrorCode::kInternal);
  wire.set_code(-3);
  EXPECT_EQ(FromProto(wire).code(), ErrorCode::kInternal);
}

TEST(RpcConvertTest, CapabilityRoundTripAndTagLength) {
  transfer::Capability cap;
  cap.segment = 3;
  cap.offset = 4096;
  cap.length = 100;
  cap.op = transfer::AccessOp::kWrite;
  cap.expiry_unix_ms = 1234;
  for (size_t i = 0; i < cap.tag.size(); ++i) cap.tag[i] = static_cast<uint8_t>(i);
  proto::Capability wire;
  ToProto(cap, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->segment, 3u);
  EXPECT_EQ(back->offset, 4096u);
  EXPECT_EQ(back->length, 100u);
  EXPECT_EQ(back->op, transfer::AccessOp::kWrite);
  EXPECT_EQ(back->expiry_unix_ms, 1234);
  EXPECT_EQ(back->tag, cap.tag);

  wire.set_tag(std::string(31, 'x'));
  EXPECT_EQ(FromProto(wire).status().code(), ErrorCode::kCapabilityInvalid);
  wire.set_tag(std::string(33, 'x'));
  EXPECT_EQ(FromProto(wire).status().code(), ErrorCode::kCapabilityInvalid);
  ToProto(cap, &wire);
  wire.set_op(7);
  EXPECT_EQ(FromProto(wire).status().code(), ErrorCode::kCapabilityInvalid);
}

TEST(RpcConvertTest, SegmentAndPutConfig) {
  master::SegmentInfo info{5, {"s", 1000, "n", "h:1", master::Tier::kPmem}, 10, 2, 900};
  proto::SegmentInfo wire;
  ToProto(info, &wire);
  master::SegmentInfo back = FromProto(wire);
  EXPECT_EQ(back.id, 5u);
  EXPECT_EQ(back.spec.name, "s");
  EXPECT_EQ(back.spec.tier, master::Tier::kPmem);
  EXPECT_EQ(back.largest_free, 900u);

  master::SegmentSpec spec{"pmem-1", 1 << 20, "n", "h:1", master::Tier::kPmem, 7, 0xfeed};
  proto::SegmentSpec spec_wire;
  ToProto(spec, &spec_wire);
  EXPECT_EQ(FromProto(spec_wire), spec);  // the file identity too, which a copy lacks

  proto::PutConfig config;
  config.set_replica_count(0);
  config.set_soft_pin_ttl_ms(50);
  config.set_parent_key("p");
  master::PutConfig c = FromProto(config);
  EXPECT_EQ(c.replica_count, 1u);  // 0 on the wire means 1
  EXPECT_EQ(c.soft_pin_ttl_ms, 50);
  EXPECT_EQ(c.parent_key, "p");
}

// A master that dies or shuts down mid-call cancels the call: the client must
// see UNAVAILABLE (retry elsewhere, or later), not INTERNAL ("a bug, report
// it"). The chaos checker found INTERNAL there.
TEST(GrpcCodes, AMasterGoingAwayMidCallIsUnavailable) {
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::CANCELLED), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::UNKNOWN), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::ABORTED), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::UNAVAILABLE), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::DEADLINE_EXCEEDED), ErrorCode::kTimeout);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::RESOURCE_EXHAUSTED), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::UNIMPLEMENTED), ErrorCode::kUnsupported);
  EXPECT_EQ(ErrorCodeOfGrpc(grpc::StatusCode::DATA_LOSS), ErrorCode::kInternal);
}

}  // namespace
}  // namespace crescent::rpc
