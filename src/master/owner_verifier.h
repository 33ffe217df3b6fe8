// Owner verifiers: what the master keeps of a segment's owner token.
//
// A store node mounts with a random 64-bit owner token (SegmentSpec::
// owner_token), its proof, on later calls, that it is the process with the
// memory it mounted: an unmount, a repeated mount, a take-over after a master
// restart (PreviousMount). The engine keeps, in memory and so in its log and
// snapshots, only the token's verifier: the first 8 bytes, little-endian, of
// SHA-256 over a label, the segment's name and the token. A presented token is
// checked by hashing it and comparing; the verifier gives no token back
// (finding one means searching the 2^64 tokens), and the name makes that
// search serve one segment only. MountSegment and UnmountSegment turn what
// they are given into verifiers at once; a log record written before
// verifiers were kept holds the token itself, and its decoder turns it into
// the verifier (log_record.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "master/types.h"

namespace crescent::master {

// 0 (no token, which proves nothing) for 0; never 0 for any other token.
uint64_t OwnerVerifier(std::string_view segment_name, uint64_t token);

// `previous` with each token replaced by its verifier for `segment_name`.
PreviousMount WithVerifiers(std::string_view segment_name, PreviousMount previous);

}  // namespace crescent::master
