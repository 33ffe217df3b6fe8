// Session hints derived from a trace, for `crescent sim --session-hints F` and
// `crescent replay --session-hints F`: which requests are a conversation's
// last turn, and which of those an engine would hint as ended.
//
// A later request R' *extends* request R when R' comes after R in the trace
// and starts with every block of R except perhaps R's last one: R''s
// hash_ids begin with R's first n - 1 hash_ids (n >= 2), or with R's only
// hash_id (n = 1). The last block is left out because it usually holds a
// partial block of tokens: the next turn of a conversation has more tokens
// there, so the block's hash differs, and that turn shares the n - 1 full
// blocks before it (on the public synthetic trace, 1156 of the 1782 requests
// that share a prefix with a later request share exactly their first n - 1
// blocks; 213 share all n). A request that no later request extends is a
// last turn: no later request reads (almost) all of its pages again, as the
// next turn of its conversation would. A later request that shares only a
// shorter prefix (a system prompt, a document) does not extend it. A request
// with no blocks is never a last turn (there is nothing to hint).
//
// Both functions are pure: the same trace, fraction and seed give the same
// answer, in any process.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/trace_reader.h"

namespace crescent::sim {

// Per request index: true when no later request extends it. O(total blocks)
// time and memory.
std::vector<bool> LastTurns(const Trace& trace);

// Per request index: true when the request is a last turn and is hinted as
// ended, each last turn independently with probability `fraction` (clamped to
// [0, 1]), drawn from a generator seeded by `seed`. fraction 0 hints nothing;
// fraction 1 hints every last turn.
std::vector<bool> SessionHints(const Trace& trace, double fraction, uint64_t seed);

}  // namespace crescent::sim
