#include "rpc/convert.h"

#include <algorithm>
#include <string>

namespace crescent::rpc {

void ToProto(const Status& status, proto::Status* out) {
  out->set_code(static_cast<int32_t>(status.code()));
  out->set_message(status.message());
}

Status FromProto(const proto::Status& status) {
  int32_t code = status.code();
  if (code == 0) return Status::Ok();
  // Known range: kOk..kLastErrorCode. Unknown numbers must not be read as success.
  if (code < 0 || code > static_cast<int32_t>(kLastErrorCode)) {
    return Status(ErrorCode::kInternal,
                  "unknown error code " + std::to_string(code) + ": " + status.message());
  }
  return Status(static_cast<ErrorCode>(code), status.message());
}

void ToProto(const master::SegmentSpec& spec, proto::SegmentSpec* out) {
  out->set_name(spec.name);
  out->set_capacity(spec.capacity);
  out->set_owner_node(spec.owner_node);
  out->set_endpoint(spec.endpoint);
  out->set_tier(static_cast<uint32_t>(spec.tier));
  out->set_owner_token(spec.owner_token);
  out->set_file_identity(spec.file_identity);
}

master::SegmentSpec FromProto(const proto::SegmentSpec& spec) {
  master::SegmentSpec out;
  out.name = spec.name();
  out.capacity = spec.capacity();
  out.owner_node = spec.owner_node();
  out.endpoint = spec.endpoint();
  out.owner_token = spec.owner_token();
  out.file_identity = spec.file_identity();
  out.tier = spec.tier() == static_cast<uint32_t>(master::Tier::kPmem) ? master::Tier::kPmem
                                                                       : master::Tier::kDram;
  return out;
}

void ToProto(const master::SegmentInfo& info, proto::SegmentInfo* out) {
  out->set_id(info.id);
  ToProto(info.spec, out->mutable_spec());
  out->mutable_spec()->clear_owner_token();  // the owner's secret
  // A persistent segment's take-over needs it (segment_table.cc): not shown.
  out->mutable_spec()->clear_file_identity();
  out->set_used_bytes(info.used_bytes);
  out->set_allocations(info.allocations);
  out->set_largest_free(info.largest_free);
}

master::SegmentInfo FromProto(const proto::SegmentInfo& info) {
  master::SegmentInfo out;
  out.id = info.id();
  out.spec = FromProto(info.spec());
  out.used_bytes = info.used_bytes();
  out.allocations = info.allocations();
  out.largest_free = info.largest_free();
  return out;
}

void ToProto(const master::PutConfig& config, proto::PutConfig* out) {
  out->set_replica_count(config.replica_count);
  out->set_preferred_segment(config.preferred_segment);
  out->set_local_node(config.local_node);
  out->set_soft_pin_ttl_ms(config.soft_pin_ttl_ms);
  out->set_hard_pin(config.hard_pin);
  out->set_parent_key(config.parent_key);
  out->set_cache_capability_ms(config.cache_capability_ms);
}

master::PutConfig FromProto(const proto::PutConfig& config) {
  master::PutConfig out;
  out.replica_count = std::max<uint32_t>(config.replica_count(), 1);
  out.preferred_segment = config.preferred_segment();
  out.local_node = config.local_node();
  out.soft_pin_ttl_ms = config.soft_pin_ttl_ms();
  out.hard_pin = config.hard_pin();
  out.parent_key = config.parent_key();
  out.cache_capability_ms = config.cache_capability_ms();
  return out;
}

void ToProto(const transfer::Capability& cap, proto::Capability* out) {
  out->set_segment(cap.segment);
  out->set_offset(cap.offset);
  out->set_length(cap.length);
  out->set_op(static_cast<uint32_t>(cap.op));
  out->set_expiry_unix_ms(cap.expiry_unix_ms);
  out->set_tag(reinterpret_cast<const char*>(cap.tag.data()), cap.tag.size());
}

StatusOr<transfer::Capability> FromProto(const proto::Capability& cap) {
  transfer::Capability out;
  if (cap.tag().size() != out.tag.size()) {
    return Status(ErrorCode::kCapabilityInvalid,
                  "capability tag is " + std::to_string(cap.tag().size()) + " bytes; expected " +
                      std::to_string(out.tag.size()));
  }
  if (cap.op() != static_cast<uint32_t>(transfer::AccessOp::kRead) &&
      cap.op() != static_cast<uint32_t>(transfer::AccessOp::kWrite)) {
    return Status(ErrorCode::kCapabilityInvalid,
                  "capability op " + std::to_string(cap.op()) + " is neither read nor write");
  }
  out.segment = cap.segment();
  out.offset = cap.offset();
  out.length = cap.length();
  out.op = static_cast<transfer::AccessOp>(cap.op());
  out.expiry_unix_ms = cap.expiry_unix_ms();
  std::copy(cap.tag().begin(), cap.tag().end(), out.tag.begin());
  return out;
}

}  // namespace crescent::rpc
