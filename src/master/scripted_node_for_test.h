// ScriptedNode: a ReplicaCopier for the engine's tests whose store nodes'
// answers to checks (Verify) the test scripts. By default a check passes; a
// place listed in `corrupt` answers CHECKSUM_MISMATCH; `answer`, when set,
// decides instead, given the offset and the n-th time (0-based) that offset
// is asked. It copies nothing.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "master/replica_copier.h"

namespace crescent::master::testing {

class ScriptedNode final : public ReplicaCopier {
 public:
  std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
    return std::vector<Status>(copies.size(), Status(ErrorCode::kUnavailable, "no copies here"));
  }
  std::vector<Status> Verify(std::span<const ReplicaCheck> checks, int64_t) override {
    std::vector<Status> out;
    for (const ReplicaCheck& c : checks) {
      const uint64_t n = asked[c.replica.offset]++;
      if (answer) {
        out.push_back(answer(c.replica.offset, n));
      } else if (corrupt.contains({c.replica.segment, c.replica.offset})) {
        out.push_back(Status(ErrorCode::kChecksumMismatch, "the range's bytes do not match"));
      } else {
        out.push_back(Status::Ok());
      }
    }
    return out;
  }
  std::function<Status(uint64_t offset, uint64_t nth)> answer;
  std::set<std::pair<SegmentId, uint64_t>> corrupt;  // (segment, offset) whose bytes are bad
  std::map<uint64_t, uint64_t> asked;                // offset -> checks received
};

}  // namespace crescent::master::testing
