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
#include "rpc/batch_parts.h"
#include "rpc/messages.pb.h"

namespace crescent::rpc {

// Segment names and node ids: non-empty, at most this many bytes.
inline constexpr size_t kMaxNameBytes = 256;

Status CheckName(std::string_view field, std::string_view value);
// Empty allowed; otherwise as CheckName.
Status CheckOptionalName(std::string_view field, std::string_view value);

// Name, owner, endpoint (ParseEndpoint), capacity > 0, tier 0 or 1.
Status CheckSegmentSpec(const proto::SegmentSpec& spec);

// At most max_batch keys (and at least one when !allow_empty). What concerns
// one key (empty, too long) is not checked here: the engine refuses that key
// alone, and the other keys of the batch still get their answers.
Status CheckKeys(const google::protobuf::RepeatedPtrField<std::string>& keys, uint32_t max_batch,
                 bool allow_empty);

// A key (non-empty, at most max_key_length bytes) and a segment id (ids start at 1).
Status CheckCorruptReport(const proto::ReportCorruptReplicaRequest& req, uint32_t max_key_length);

// Replies that grow with the request. A batch reply whose every result may
// carry replicas (BatchPutStart, BatchGetReplicaList) is bounded before the
// engine runs, so that a reply the message limit would refuse is never built,
// and no put is started or space allocated for it. The bound per result is
// ResultReplyBound (batch_parts.h), which clients split their batches by.

// The largest reply a batch over `keys` may get when each result carries up to
// `replicas_per_key` replicas whose endpoints are at most `endpoint_bytes` long.
uint64_t BatchReplyBound(const google::protobuf::RepeatedPtrField<std::string>& keys,
                         uint64_t replicas_per_key, uint64_t endpoint_bytes);
// kInvalidArgument naming `rpc`, the bound and the limit when `bound` (plus
// kReplyHeadroomBytes) exceeds `max_message_bytes`.
Status CheckReplyFits(std::string_view rpc, size_t keys, uint64_t bound,
                      uint64_t max_message_bytes);

// replica_count <= max_replicas, soft_pin_ttl_ms >= 0, name fields bounded,
// parent_key at most max_key_length.
Status CheckPutConfig(const proto::PutConfig& config, uint32_t max_replicas,
                      uint32_t max_key_length);

}  // namespace crescent::rpc
