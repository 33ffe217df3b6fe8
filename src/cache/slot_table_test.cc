#include "cache/slot_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/node_array.h"
#include "cache/slot_index.h"

namespace crescent::cache {
namespace {

// A SlotIndex over slots whose ids live in a plain vector, checked against a
// map after every step.
class IndexModel {
 public:
  SlotIndex::Slot Add(ObjectId id) {
    const SlotIndex::Slot slot = index_.Add(id, IdOf(), [&] {
      ids_.push_back(id);
      return static_cast<SlotIndex::Slot>(ids_.size() - 1);
    });
    if (slot != SlotIndex::kNil) model_[id] = slot;
    return slot;
  }
  void Erase(ObjectId id) {
    const SlotIndex::Slot slot = model_.at(id);
    index_.Erase(id, slot);
    model_.erase(id);
  }
  SlotIndex::Slot Find(ObjectId id) const { return index_.Find(id, IdOf()); }
  SlotIndex::Slot Expected(ObjectId id) const {
    auto it = model_.find(id);
    return it == model_.end() ? SlotIndex::kNil : it->second;
  }
  // Every id present, at its slot, and nothing else.
  void CheckAll() const {
    ASSERT_EQ(index_.size(), model_.size());
    for (const auto& [id, slot] : model_) ASSERT_EQ(index_.Find(id, IdOf()), slot) << id;
    std::vector<SlotIndex::Slot> seen;
    index_.ForEach([&](SlotIndex::Slot slot) { seen.push_back(slot); });
    std::vector<SlotIndex::Slot> expected;
    for (const auto& [id, slot] : model_) expected.push_back(slot);
    std::sort(seen.begin(), seen.end());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(seen, expected);
  }
  SlotIndex& index() { return index_; }
  const std::unordered_map<ObjectId, SlotIndex::Slot>& model() const { return model_; }

 private:
  struct IdOfSlot {
    const std::vector<ObjectId>* ids;
    ObjectId operator()(SlotIndex::Slot slot) const { return (*ids)[slot]; }
  };
  IdOfSlot IdOf() const { return IdOfSlot{&ids_}; }
  SlotIndex index_;
  std::vector<ObjectId> ids_{0};  // slot 0 is kNil
  std::unordered_map<ObjectId, SlotIndex::Slot> model_;
};

TEST(SlotIndexTest, GrowsAcrossMigrationsWithInterleavedFindsAndErases) {
  IndexModel m;
  std::mt19937_64 rng(11);
  std::vector<ObjectId> live;
  size_t migrating_steps = 0, grown = 0;
  size_t capacity = m.index().capacity();
  bool was_migrating = false;
  // Mostly adds (so the index grows through many migrations, from 16 entries
  // to 512K, the largest ones in mappings of their own), with erases, repeated
  // adds and finds of present and absent ids between them.
  for (int step = 0; step < 300'000; ++step) {
    const uint64_t r = rng() % 10;
    if (r < 6 || live.empty()) {
      const ObjectId id = rng() >> 1;
      ASSERT_NE(m.Add(id), SlotIndex::kNil);
      live.push_back(id);
    } else if (r < 8) {
      const size_t at = rng() % live.size();
      m.Erase(live[at]);
      live[at] = live.back();
      live.pop_back();
    } else if (r == 8) {
      const ObjectId id = live[rng() % live.size()];
      ASSERT_EQ(m.Add(id), SlotIndex::kNil);  // present: not added again
      ASSERT_EQ(m.Find(id), m.Expected(id));
    } else {
      const ObjectId absent = rng() >> 1;
      ASSERT_EQ(m.Find(absent), m.Expected(absent));
      const ObjectId present = live[rng() % live.size()];
      ASSERT_EQ(m.Find(present), m.Expected(present));
    }
    const bool migrating = m.index().migrating();
    if (migrating) ++migrating_steps;
    if (m.index().capacity() != capacity) {
      capacity = m.index().capacity();
      ++grown;
      m.CheckAll();  // just after a migration started
    }
    // Often in the middle of one, and just after one ended (CheckAll walks
    // every id: between migrations the finds above check enough).
    if ((migrating && step % 997 == 0) || (was_migrating && !migrating)) m.CheckAll();
    was_migrating = migrating;
  }
  m.CheckAll();
  EXPECT_GE(grown, 14u);
  EXPECT_GT(migrating_steps, 10'000u);
  // Erasing everything (partly during a migration) leaves it empty.
  for (ObjectId id : live) m.Erase(id);
  m.CheckAll();
  EXPECT_EQ(m.index().size(), 0u);
}

TEST(SlotIndexTest, ReserveDuringAMigrationKeepsEveryId) {
  IndexModel m;
  std::mt19937_64 rng(3);
  while (!m.index().migrating() || m.index().size() < 1000) m.Add(rng() >> 1);
  ASSERT_TRUE(m.index().migrating());
  m.index().Reserve(100'000);
  EXPECT_FALSE(m.index().migrating());
  const size_t capacity = m.index().capacity();
  m.CheckAll();
  while (m.index().size() < 100'000) ASSERT_NE(m.Add(rng() >> 1), SlotIndex::kNil);
  EXPECT_EQ(m.index().capacity(), capacity);  // no growth up to the reserved count
  EXPECT_FALSE(m.index().migrating());
  m.CheckAll();
}

// Ids that all share their home position in a small table: long runs, which
// erasing must shift back without losing any.
TEST(SlotIndexTest, ErasingFromLongRunsKeepsTheRestReachable) {
  IndexModel m;
  std::vector<ObjectId> ids;
  for (ObjectId id = 1; ids.size() < 9; ++id) {
    if ((SlotIndex::HashOf(id) >> 28) == 5) ids.push_back(id);  // home 5 of 16
  }
  for (ObjectId id : ids) ASSERT_NE(m.Add(id), SlotIndex::kNil);
  ASSERT_EQ(m.index().capacity(), 16u);
  m.CheckAll();
  for (size_t i = 0; i < ids.size(); i += 2) m.Erase(ids[i]);
  m.CheckAll();
  for (size_t i = 1; i < ids.size(); i += 2) m.Erase(ids[i]);
  m.CheckAll();
}

// Keys the caller hashes itself (the master's byte strings): the index
// grows through many doublings, a few entries at a time. Each migration lasts
// at least as many adds as the old table held entries over 64 (kMoveStep is
// 16, plus the rest of a run), so no add moves the whole table; and every key
// stays found, with finds, erases and adds of present keys in between.
TEST(SlotIndexTest, CallerHashedKeysGrowAFewEntriesPerAdd) {
  SlotIndex index;
  std::vector<std::string> keys{""};  // slot 0 is kNil
  std::unordered_map<std::string, SlotIndex::Slot> model;
  auto hash_of = [](const std::string& key) {
    const uint64_t hash = std::hash<std::string>{}(key);
    return static_cast<uint32_t>(hash * 0x9e3779b97f4a7c15ull >> 32);
  };
  auto matches = [&](const std::string& key) {
    return [&keys, &key](SlotIndex::Slot slot) { return keys[slot] == key; };
  };
  std::mt19937_64 rng(17);
  size_t migrations = 0, calls_in_migration = 0, old_entries = 0;
  size_t capacity = index.capacity();
  for (int step = 0; step < 200'000; ++step) {
    const std::string key = "page-" + std::to_string(rng() % 1'000'000);
    if (auto it = model.find(key); it != model.end()) {
      ASSERT_EQ(index.FindHashed(hash_of(key), matches(key)), it->second);
      if (step % 3 == 0) {
        index.EraseHashed(hash_of(key), it->second);
        model.erase(it);
      } else {
        // Present: not added again, and make() is not called.
        ASSERT_EQ(index.AddHashed(hash_of(key), matches(key),
                                  []() -> SlotIndex::Slot { throw std::logic_error("made"); }),
                  SlotIndex::kNil);
      }
    } else {
      ASSERT_EQ(index.FindHashed(hash_of(key), matches(key)), SlotIndex::kNil);
      const SlotIndex::Slot slot = index.AddHashed(hash_of(key), matches(key), [&] {
        keys.push_back(key);
        return static_cast<SlotIndex::Slot>(keys.size() - 1);
      });
      ASSERT_NE(slot, SlotIndex::kNil);
      model[key] = slot;
    }
    if (index.capacity() != capacity) {
      // A migration starts: the old table holds the entries there were.
      if (old_entries >= 1024) ASSERT_GE(calls_in_migration, old_entries / 64);
      capacity = index.capacity();
      old_entries = model.size();
      calls_in_migration = 0;
      ++migrations;
    }
    if (index.migrating()) ++calls_in_migration;
    ASSERT_EQ(index.size(), model.size());
  }
  EXPECT_GE(migrations, 12u);
  for (const auto& [key, slot] : model) {
    ASSERT_EQ(index.FindHashed(hash_of(key), matches(key)), slot);
  }
}

struct TestNode {
  uint32_t id_low = 0;
  uint32_t id_high = 0;
  uint32_t value = 7;
  uint32_t generation = 0;
  ObjectId Id() const { return (uint64_t{id_high} << 32) | id_low; }
  void SetId(ObjectId id) {
    id_low = static_cast<uint32_t>(id);
    id_high = static_cast<uint32_t>(id >> 32);
  }
};

TEST(NodeArrayTest, GrowsIntoAMappingWithoutMovingItsNodes) {
  NodeArray<TestNode> nodes;
  const TestNode* mapped_at = nullptr;
  for (uint32_t i = 0; i < 1'000'000; ++i) {
    nodes.emplace_back();
    ASSERT_EQ(nodes[i].value, 7u);  // value-initialised
    nodes[i].SetId(i);
    // Past 1 MiB the nodes sit in the reservation and never move again.
    if (i * sizeof(TestNode) > (size_t{2} << 20)) {
      if (mapped_at == nullptr) mapped_at = &nodes[0];
      ASSERT_EQ(&nodes[0], mapped_at);
    }
  }
  ASSERT_EQ(nodes.size(), 1'000'000u);
  for (uint32_t i = 0; i < 1'000'000; ++i) ASSERT_EQ(nodes[i].Id(), i);
  EXPECT_EQ(nodes.span().size(), 1'000'000u);
}

TEST(NodeArrayTest, ResizesAssignsAndMovesSmallAndMapped) {
  for (const size_t count : {size_t{100}, size_t{200'000}}) {  // malloc'd, then mapped
    NodeArray<TestNode> nodes;
    nodes.resize(count);
    ASSERT_EQ(nodes.size(), count);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(nodes[i].value, 7u);
      nodes[i].SetId(i);
    }
    nodes.resize(count + 10);  // keeps what it held, value-initialises the rest
    EXPECT_EQ(nodes[count - 1].Id(), count - 1);
    EXPECT_EQ(nodes[count + 9].value, 7u);

    NodeArray<TestNode> moved(std::move(nodes));
    EXPECT_EQ(nodes.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from array is empty
    ASSERT_EQ(moved.size(), count + 10);
    EXPECT_EQ(moved[count / 2].Id(), count / 2);

    NodeArray<TestNode> other;
    other.emplace_back();
    other = std::move(moved);
    ASSERT_EQ(other.size(), count + 10);
    EXPECT_EQ(other[count - 1].Id(), count - 1);

    TestNode filler;
    filler.SetId(42);
    other.assign(count / 3, filler);
    ASSERT_EQ(other.size(), count / 3);
    for (size_t i = 0; i < count / 3; ++i) ASSERT_EQ(other[i].Id(), 42u);
    other.emplace_back();
    EXPECT_EQ(other[count / 3].value, 7u);
  }
}

TEST(SlotTableTest, KeepsNodesAndGenerationsAcrossGrowth) {
  SlotTable<TestNode> table;
  std::mt19937_64 rng(5);
  std::unordered_map<ObjectId, SlotTable<TestNode>::Slot> model;
  std::vector<ObjectId> live;
  size_t peak = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (rng() % 4 != 0 || live.empty()) {
      const ObjectId id = rng() >> 1;
      const auto slot = table.Add(id);
      ASSERT_NE(slot, SlotTable<TestNode>::kNil);
      ASSERT_EQ(table.at(slot).Id(), id);
      model[id] = slot;
      live.push_back(id);
      peak = std::max(peak, live.size());
    } else {
      const size_t at = rng() % live.size();
      const auto slot = model.at(live[at]);
      const uint32_t generation = table.at(slot).generation;
      table.Erase(slot);
      EXPECT_EQ(table.at(slot).generation, generation + 1);
      EXPECT_FALSE(table.Contains(live[at]));
      model.erase(live[at]);
      live[at] = live.back();
      live.pop_back();
    }
  }
  ASSERT_EQ(table.size(), model.size());
  for (const auto& [id, slot] : model) {
    ASSERT_EQ(table.Find(id), slot);
    ASSERT_EQ(table.at(slot).Id(), id);
  }
  size_t visited = 0;
  table.ForEach([&](auto slot, TestNode& node) {
    ASSERT_EQ(model.at(node.Id()), slot);
    ++visited;
  });
  EXPECT_EQ(visited, model.size());
  // The array never exceeds the peak node count plus one (freed slots reused).
  EXPECT_EQ(table.raw_nodes().size(), peak + 1);
}

}  // namespace
}  // namespace crescent::cache
