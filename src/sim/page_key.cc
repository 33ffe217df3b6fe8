#include "sim/page_key.h"

#include "common/hash.h"

namespace crescent::sim {

std::string PageKey(std::string_view key_prefix, uint64_t hash_id) {
  std::string key(key_prefix);
  key += '-';
  key += std::to_string(hash_id);
  return key;
}

uint64_t PageHistory(std::string_view key_prefix, uint64_t hash_id) {
  return HashKey(PageKey(key_prefix, hash_id));
}

std::vector<uint64_t> PageHistories(const Trace& trace, std::string_view key_prefix) {
  std::vector<uint64_t> histories;
  histories.reserve(trace.distinct_blocks());
  for (uint64_t hash_id : trace.block_keys) histories.push_back(PageHistory(key_prefix, hash_id));
  return histories;
}

}  // namespace crescent::sim
