// Page keys: the key under which a trace's block is stored in a live cluster,
// "<key_prefix>-<hash_id>" (one object per hash id). `crescent replay` writes
// pages under these keys, and `crescent sim` names them the same way, in both
// of its engines:
//  - the master engine (master_replay.h) puts and reads these very keys;
//  - the policy engine (Simulate) passes each block's PageHistory() as
//    InsertInfo::history, the key hash the master passes for it.
// Policies that sample or remember keys by their history (adaptive's SHARDS
// sampling, s3fifo's ghost, learned's recent keys) therefore see the same
// identities offline, through the master and live, and sample the same keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace_reader.h"

namespace crescent::sim {

// `crescent replay`'s default --key-prefix, and the one the simulator assumes.
inline constexpr std::string_view kDefaultKeyPrefix = "replay";

std::string PageKey(std::string_view key_prefix, uint64_t hash_id);

// HashKey(PageKey(key_prefix, hash_id)): the history identity the master gives
// the page (master_put.cc passes the key's hash).
uint64_t PageHistory(std::string_view key_prefix, uint64_t hash_id);

// PageHistory() of every dense block of `trace`, indexed by BlockId.
std::vector<uint64_t> PageHistories(const Trace& trace,
                                    std::string_view key_prefix = kDefaultKeyPrefix);

}  // namespace crescent::sim
