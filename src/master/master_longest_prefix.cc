// GetLongestPrefix: the longest stored key that prefixes a given key, for
// keys whose prefixes are themselves keys (token strings, paths). Keys are
// sharded by hash, so each shard's KeyIndex (complete keys only) offers its
// longest readable candidate under its shared lock, one shard at a time; the
// longest of those is then read as GetReplicaList reads a key. A remove that
// lands between the two steps sends the search round again.
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

namespace {
// Rounds of search-then-read before a key removed under the search each time
// is answered as a miss.
constexpr int kLongestPrefixRounds = 3;
}  // namespace

StatusOr<PrefixMatch> MasterService::GetLongestPrefix(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) {
    counters_.longest_prefix.Record(1, 1);
    return s;
  }
  objects_.EnsureKeyIndexes();
  // A tenant's key matches only keys longer than its tenant's prefix.
  const size_t namespace_bytes = key.size() - ClientKeyOf(key).size();
  for (int round = 0; round < kLongestPrefixRounds; ++round) {
    std::string best;
    bool found = false;
    for (const auto& shard : objects_.shards()) {
      std::shared_lock lock(shard->mutex());
      shard->VisitPrefixesOf(key, std::max(namespace_bytes, best.size()), [&](uint32_t slot) {
        const ObjectEntry& e = shard->entry(slot);
        if (!HasLiveReplica(e)) return true;  // not readable: try the next shorter
        best.assign(e.key_view());
        found = true;
        return false;
      });
    }
    if (!found) break;
    Located loc = objects_.Locate(best);
    std::shared_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(best, loc.hash);
    if (slot == kNoSlot || loc.shard->entry(slot).state != EntryState::kComplete) continue;
    auto r = ReadLocked(*loc.shard, slot, clock_.NowMs());
    if (!r.ok()) continue;
    counters_.longest_prefix.Record(1, 0);
    tenants_.Read(best, /*hit=*/true);
    return PrefixMatch{std::move(best), std::move(*r)};
  }
  counters_.longest_prefix.Record(1, 1);
  tenants_.Read(key, /*hit=*/false);
  return Status(ErrorCode::kObjectNotFound,
                "no stored key is a prefix of '" + std::string(key) + "'");
}

}  // namespace crescent::master
