#include "rpc/batch_parts.h"

#include <algorithm>

namespace crescent::rpc {

std::vector<KeyRange> SplitBatch(std::span<const std::string> keys, size_t max_keys,
                                 uint64_t max_message_bytes, uint64_t replicas_per_key) {
  max_keys = std::max<size_t>(max_keys, 1);
  const uint64_t budget =
      max_message_bytes > kReplyHeadroomBytes ? max_message_bytes - kReplyHeadroomBytes : 0;
  std::vector<KeyRange> parts;
  KeyRange part;
  uint64_t bytes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t cost = ResultReplyBound(keys[i].size(), replicas_per_key, kAssumedEndpointBytes);
    if (part.size() > 0 && (part.size() == max_keys || bytes + cost > budget)) {
      parts.push_back(part);
      part = KeyRange{i, i};
      bytes = 0;
    }
    part.end = i + 1;
    bytes += cost;
  }
  if (part.size() > 0) parts.push_back(part);
  return parts;
}

}  // namespace crescent::rpc
