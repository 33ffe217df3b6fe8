#include "rpc/server_validation.h"

#include "common/endpoint.h"

namespace crescent::rpc {
namespace {

Status Invalid(std::string message) {
  return Status(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Status CheckName(std::string_view field, std::string_view value) {
  if (value.empty()) return Invalid(std::string(field) + " is empty");
  return CheckOptionalName(field, value);
}

Status CheckOptionalName(std::string_view field, std::string_view value) {
  if (value.size() > kMaxNameBytes) {
    return Invalid(std::string(field) + " is " + std::to_string(value.size()) +
                   " bytes; the limit is " + std::to_string(kMaxNameBytes));
  }
  return Status::Ok();
}

Status CheckSegmentSpec(const proto::SegmentSpec& spec) {
  if (auto s = CheckName("segment name", spec.name()); !s.ok()) return s;
  if (auto s = CheckName("owner node", spec.owner_node()); !s.ok()) return s;
  if (spec.capacity() == 0) return Invalid("segment capacity is 0");
  if (spec.owner_token() == 0) {
    return Invalid("segment has no owner token (UnmountSegment needs it as proof of ownership)");
  }
  if (spec.tier() > 1) {
    return Invalid("tier " + std::to_string(spec.tier()) + " is neither 0 (DRAM) nor 1 (PMEM)");
  }
  // ParseEndpoint's message already names the endpoint and what is wrong with it.
  if (auto ep = ParseEndpoint(spec.endpoint()); !ep.ok()) return ep.status();
  return Status::Ok();
}

Status CheckKeys(const google::protobuf::RepeatedPtrField<std::string>& keys, uint32_t max_batch,
                 bool allow_empty) {
  if (keys.empty() && !allow_empty) return Invalid("batch has no keys");
  if (static_cast<uint64_t>(keys.size()) > max_batch) {
    return Invalid("batch of " + std::to_string(keys.size()) + " keys exceeds the limit of " +
                   std::to_string(max_batch));
  }
  return Status::Ok();
}

Status CheckCorruptReport(const proto::ReportCorruptReplicaRequest& req, uint32_t max_key_length) {
  if (req.key().empty() || req.key().size() > max_key_length) {
    return Status(ErrorCode::kInvalidKey, "key is " + std::to_string(req.key().size()) +
                                              " bytes; it must be 1 to " +
                                              std::to_string(max_key_length));
  }
  if (req.segment() == 0) return Invalid("segment 0 names no segment");
  return Status::Ok();
}

uint64_t BatchReplyBound(const google::protobuf::RepeatedPtrField<std::string>& keys,
                         uint64_t replicas_per_key, uint64_t endpoint_bytes) {
  uint64_t bound = 0;
  for (const std::string& k : keys) {
    bound += ResultReplyBound(k.size(), replicas_per_key, endpoint_bytes);
  }
  return bound;
}

Status CheckReplyFits(std::string_view rpc, size_t keys, uint64_t bound,
                      uint64_t max_message_bytes) {
  if (bound + kReplyHeadroomBytes <= max_message_bytes) return Status::Ok();
  return Invalid(std::string(rpc) + " of " + std::to_string(keys) +
                 " keys could answer with up to " + std::to_string(bound) + " bytes, over the " +
                 std::to_string(max_message_bytes) + "-byte message limit; split the batch");
}

Status CheckPutConfig(const proto::PutConfig& config, uint32_t max_replicas,
                      uint32_t max_key_length) {
  if (config.replica_count() > max_replicas) {
    return Invalid("replica_count " + std::to_string(config.replica_count()) +
                   " exceeds the limit of " + std::to_string(max_replicas));
  }
  if (config.soft_pin_ttl_ms() < 0) {
    return Invalid("soft_pin_ttl_ms is negative (" + std::to_string(config.soft_pin_ttl_ms()) +
                   ")");
  }
  if (auto s = CheckOptionalName("preferred_segment", config.preferred_segment()); !s.ok()) {
    return s;
  }
  if (auto s = CheckOptionalName("local_node", config.local_node()); !s.ok()) return s;
  if (config.parent_key().size() > max_key_length) {
    return Status(ErrorCode::kInvalidKey, "parent_key is longer than the key limit");
  }
  return Status::Ok();
}

}  // namespace crescent::rpc
