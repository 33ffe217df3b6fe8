// Batch parts: how a batch call of any size is cut into requests the master
// accepts, and the reply bound both sides compute for that.
//
// The master refuses (docs/control-plane.md, "Batches"):
//  - a message over its limit (MasterServerOptions::max_message_bytes: gRPC's
//    receive/send limit and the lean protocol's body limit alike);
//  - a batch of more keys than its key limit (max_batch);
//  - a batch whose reply could exceed the message limit: the sum over its
//    keys of ResultReplyBound, plus kReplyHeadroomBytes (server_validation.h,
//    CheckReplyFits).
// A part is a run of consecutive keys within all three: at most `max_keys`
// keys whose reply bounds add up to at most the message limit less
// kReplyHeadroomBytes. A key's reply bound exceeds what it adds to its request
// by at least kResultReplyBytes minus the ~50 bytes of a key's request fields
// (framing, size, put attempt, token, checksum); that slack, over the thousand
// keys or more of any part that comes near the limit (keys are at most 64 KiB),
// also covers a request's fixed fields (a put's config, its parent key). So a
// part's request fits as well as its reply.
//
// The client does not know the master's replica ceiling or its segments'
// endpoints: a call whose results carry replicas assumes kDefaultMaxReplicas
// replicas (a get) or the put's replica count, each with an endpoint of
// kAssumedEndpointBytes. A master with a higher ceiling or longer endpoints
// may refuse a part of near-limit size ("split the batch").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "master/master_config.h"

namespace crescent::rpc {

// Per replica in a reply: its endpoint plus this (capability, placement,
// framing, with room for a few more fields). Per result: this plus its key
// (an error message may quote the key).
inline constexpr uint64_t kReplicaReplyBytes = 160;
inline constexpr uint64_t kResultReplyBytes = 256;
// Room a reply keeps for what is not counted per key or per result.
inline constexpr uint64_t kReplyHeadroomBytes = 4096;
// The master's default replica ceiling (MasterServerOptions::max_replicas),
// which bounds a replica list's reply.
inline constexpr uint32_t kDefaultMaxReplicas = master::kMaxReplicas;
// The endpoint length a client assumes when it sizes a part (see above).
inline constexpr uint64_t kAssumedEndpointBytes = 256;

// The most one result of a batch reply may take: a key of `key_bytes`, with
// up to `replicas` replicas whose endpoints are at most `endpoint_bytes` long.
constexpr uint64_t ResultReplyBound(uint64_t key_bytes, uint64_t replicas,
                                    uint64_t endpoint_bytes) {
  return key_bytes + kResultReplyBytes + replicas * (endpoint_bytes + kReplicaReplyBytes);
}

// Keys [begin, end) of a batch.
struct KeyRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

// The parts of `keys`, in order, covering every key (none for no keys): each
// at most `max_keys` keys (at least 1) whose ResultReplyBound with
// `replicas_per_key` replicas of kAssumedEndpointBytes each adds up to at most
// `max_message_bytes` less kReplyHeadroomBytes. A key too large for that on
// its own is a part of its own (the master then refuses it, naming why).
std::vector<KeyRange> SplitBatch(std::span<const std::string> keys, size_t max_keys,
                                 uint64_t max_message_bytes, uint64_t replicas_per_key);

}  // namespace crescent::rpc
