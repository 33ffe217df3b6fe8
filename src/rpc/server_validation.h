// Request checks the server runs before a request reaches the engine. Each returns
// OK or the Status to send back (kInvalidArgument, or kInvalidKey for an oversized
// key), with a message naming the offending field. They only read the request.
//
// The engine validates keys and sizes again; these checks exist so a malformed or
// oversized request is refused cheaply, before any lock is taken, and so fields the
// engine trusts (enum ranges, counts that must match) never reach it unchecked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "crescent/status.h"
#include "rpc/master.pb.h"

namespace crescent::rpc {

// Segment names and node ids: non-empty, at most this many bytes.
inline constexpr size_t kMaxNameBytes = 256;

crescent::Status CheckName(std::string_view field, std::string_view value);
// Empty allowed; otherwise as CheckName.
crescent::Status CheckOptionalName(std::string_view field, std::string_view value);

// Name, owner, endpoint (ParseEndpoint), capacity > 0, tier 0 or 1.
crescent::Status CheckSegmentSpec(const SegmentSpec& spec);

// At most max_batch keys (and at least one when !allow_empty), each at most
// max_key_length bytes.
crescent::Status CheckKeys(const google::protobuf::RepeatedPtrField<std::string>& keys,
                           uint32_t max_batch, uint32_t max_key_length, bool allow_empty);

// Room a reply keeps for what is not counted per key or per result.
inline constexpr uint64_t kReplyHeadroomBytes = 4096;

// replica_count <= max_replicas, soft_pin_ttl_ms >= 0, name fields bounded,
// parent_key at most max_key_length.
crescent::Status CheckPutConfig(const PutConfig& config, uint32_t max_replicas,
                                uint32_t max_key_length);

}  // namespace crescent::rpc
