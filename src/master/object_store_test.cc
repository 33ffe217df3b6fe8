// ObjectStore: a key always lands in the same shard; the counts follow the
// calls; a suspended Bloom filter answers no definite miss until BuildBloom
// makes it whole from the shards; it is rebuilt larger once outgrown;
// deferred key indexes are built by EnsureKeyIndexes.
#include "master/object_store.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

namespace crescent::master {
namespace {

MasterConfig Config(uint64_t bloom_keys = 1024) {
  MasterConfig c;
  c.num_shards = 8;
  c.bloom_expected_keys = bloom_keys;
  c.bloom_false_positive_rate = 0.001;
  return c;
}

// A complete entry for `key`, as a PutEnd leaves it (not in the filter).
void Store(ObjectStore& store, const std::string& key) {
  const ObjectStore::Located loc = store.Locate(key);
  std::unique_lock lock(loc.shard->mutex());
  ReplicaSlot r;
  r.segment = 1;
  const uint32_t slot = loc.shard->Create(key, loc.hash, {&r, 1}, 0);
  loc.shard->Publish(slot);
}

// Of `n` keys never stored, how many the filter calls certainly absent.
int AbsentOf(const ObjectStore& store, int n) {
  int absent = 0;
  for (int i = 0; i < n; ++i)
    absent += store.BloomSaysAbsent(store.Locate("never/" + std::to_string(i)).hash);
  return absent;
}

TEST(ObjectStoreTest, AKeyAlwaysLandsInTheSameShardWithTheSameHash) {
  ObjectStore store(Config());
  const ObjectStore::Located a = store.Locate("page/1");
  const ObjectStore::Located b = store.Locate("page/1");
  EXPECT_EQ(a.shard, b.shard);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(store.shard_count(), 8u);
  int used = 0;
  for (const auto& shard : store.shards()) {
    bool any = false;
    for (int i = 0; i < 200 && !any; ++i)
      any = store.Locate("k" + std::to_string(i)).shard == shard.get();
    used += any;
  }
  EXPECT_EQ(used, 8);  // keys spread over every shard
}

TEST(ObjectStoreTest, CountsFollowTheCalls) {
  ObjectStore store(Config());
  store.PendingAdded();
  store.PendingAdded();
  store.Completed(/*hard_pin=*/true);
  EXPECT_EQ(store.pending(), 1u);
  EXPECT_EQ(store.live(), 1u);
  EXPECT_EQ(store.hard_pinned(), 1u);
  store.PendingGone();
  store.CompleteGone(true);
  store.AddRestored(5, 2);
  EXPECT_EQ(store.pending(), 0u);
  EXPECT_EQ(store.live(), 5u);
  EXPECT_EQ(store.hard_pinned(), 2u);
}

TEST(ObjectStoreTest, ASuspendedFilterAnswersNoMissUntilItIsBuiltFromTheShards) {
  ObjectStore store(Config());
  EXPECT_GT(AbsentOf(store, 100), 90);
  store.SuspendBloom();
  for (int i = 0; i < 50; ++i) Store(store, "restored/" + std::to_string(i));
  store.AddRestored(50, 0);
  EXPECT_EQ(AbsentOf(store, 100), 0);
  EXPECT_FALSE(store.BloomSaysAbsent(store.Locate("restored/3").hash));
  EXPECT_TRUE(store.BuildBloom());
  EXPECT_FALSE(store.BuildBloom());  // whole already
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(store.BloomSaysAbsent(store.Locate("restored/" + std::to_string(i)).hash)) << i;
  }
  EXPECT_GT(AbsentOf(store, 100), 90);
}

TEST(ObjectStoreTest, AnOutgrownFilterIsRebuiltLargerWithEveryCompleteKey) {
  ObjectStore store(Config(/*bloom_keys=*/16));
  const uint64_t before = store.bloom().design_keys();
  EXPECT_FALSE(store.MaybeRebuildBloom());
  for (int i = 0; i < 100; ++i) {
    const std::string key = "k/" + std::to_string(i);
    Store(store, key);
    store.PendingAdded();
    store.Completed(false);
    const ObjectStore::Located loc = store.Locate(key);
    store.BloomAdd(loc.shard->index(), loc.hash);
  }
  EXPECT_TRUE(store.MaybeRebuildBloom());
  EXPECT_GE(store.bloom().design_keys(), 200u);
  EXPECT_GT(store.bloom().design_keys(), before);
  EXPECT_FALSE(store.MaybeRebuildBloom());
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(store.BloomSaysAbsent(store.Locate("k/" + std::to_string(i)).hash)) << i;
  }
}

TEST(ObjectStoreTest, DeferredKeyIndexesAreBuiltOnDemand) {
  ObjectStore store(Config());
  for (const auto& shard : store.shards()) {
    std::unique_lock lock(shard->mutex());
    shard->DeferKeyIndex();
  }
  store.KeyIndexesDeferred();
  Store(store, "a/1");
  Store(store, "a/2");
  const ObjectStore::Located loc = store.Locate("a/1");
  int seen = 0;
  loc.shard->VisitPrefix("a/", [&](uint32_t) { return ++seen, true; });
  EXPECT_EQ(seen, 0);  // deferred: the index is not there yet
  store.EnsureKeyIndexes();
  for (const auto& shard : store.shards()) EXPECT_FALSE(shard->key_index_deferred());
  seen = 0;
  for (const auto& shard : store.shards()) {
    shard->VisitPrefix("a/", [&](uint32_t) { return ++seen, true; });
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace crescent::master
