// AdaptivePolicy's scheduling (the shared contract is in eviction_policy_test.cc).
#include "cache/adaptive_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <unordered_map>
#include <vector>

namespace crescent::cache {
namespace {

std::vector<AdaptiveCandidate> Candidates(std::vector<std::string> names) {
  std::vector<AdaptiveCandidate> out;
  for (auto& name : names) out.push_back({name, name, {}});
  return out;
}

// Drives a cache of `capacity` objects of size 1 as the simulator does, and
// checks that it never holds fewer objects than were admitted and not evicted
// (a move must not flush anything).
struct Driver {
  AdaptivePolicy& policy;
  uint64_t capacity;
  uint64_t hits = 0;
  uint64_t refs = 0;
  uint64_t held = 0;

  void Reference(ObjectId id) {
    ++refs;
    if (policy.Contains(id)) {
      policy.Access(id);
      ++hits;
    } else {
      while (policy.Count() >= capacity) {
        ASSERT_TRUE(policy.Evict().has_value());
        --held;
      }
      policy.Insert(id, 1);
      ++held;
    }
    ASSERT_EQ(policy.Count(), held);
  }
};

// 30 hot keys, each re-read every 60 references, among one-off keys: LRU
// keeps the hot keys in a cache of 64 (60 distinct keys between two reads of
// one), FIFO evicts each of them every couple of rounds.
template <typename Fn>
void HotAndStream(int rounds, Fn&& reference) {
  ObjectId fresh = 1'000'000;
  for (int r = 0; r < rounds; ++r) {
    for (ObjectId hot = 0; hot < 30; ++hot) {
      reference(hot);
      reference(fresh++);
    }
  }
}

TEST(AdaptivePolicyTest, MovesToTheBetterCandidateWithoutFlushing) {
  AdaptivePolicy policy({.capacity = 64}, Candidates({"fifo", "lru"}));
  Driver d{policy, 64};
  HotAndStream(100, [&](ObjectId id) { d.Reference(id); });
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  EXPECT_EQ(policy.Followed(), 1u);
  EXPECT_EQ(policy.Moves(), 1u);
  EXPECT_EQ(policy.Live().Name(), "lru");
  // Once moved, it hits like LRU: every hot reference.
  const uint64_t hits_before = d.hits;
  HotAndStream(50, [&](ObjectId id) { d.Reference(id); });
  EXPECT_GE(d.hits - hits_before, 50u * 30 * 95 / 100);
  EXPECT_FALSE(policy.Moving());  // the move has completed
}

// HotAndStream rounds through `d` until `until()` holds (at most 100 rounds);
// `fresh` numbers the one-off keys.
template <typename Until>
void HotAndStreamUntil(Driver& d, ObjectId& fresh, Until&& until) {
  for (int r = 0; r < 100 && !until(); ++r) {
    for (ObjectId hot = 0; hot < 30; ++hot) {
      d.Reference(hot);
      d.Reference(fresh++);
    }
  }
}

// The live cache moves only after a miniature of the move itself has run for
// kRehearsalWindows windows and hit more than staying would have.
TEST(AdaptivePolicyTest, AMoveIsRehearsedFirst) {
  AdaptivePolicy policy({.capacity = 64}, Candidates({"fifo", "lru"}));
  Driver d{policy, 64};
  ObjectId fresh = 1'000'000;
  HotAndStreamUntil(d, fresh, [&] { return policy.Rehearsing().has_value(); });
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  ASSERT_EQ(policy.Rehearsing(), std::optional<size_t>(1));
  EXPECT_EQ(policy.Moves(), 0u);
  EXPECT_EQ(policy.Live().Name(), "fifo");
  const size_t points_at_start = policy.Timeline().size();
  HotAndStreamUntil(d, fresh, [&] { return !policy.Rehearsing().has_value(); });
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  EXPECT_GE(policy.Timeline().size(), points_at_start + AdaptivePolicy::kRehearsalWindows);
  EXPECT_EQ(policy.Moves(), 1u);
  EXPECT_EQ(policy.RejectedMoves(), 0u);
  EXPECT_EQ(policy.Live().Name(), "lru");
}

// A move that would not pay for itself within its rehearsal is not made: here
// the workload stops re-reading anything once the rehearsal starts, so the
// moved miniature cannot hit more than staying.
TEST(AdaptivePolicyTest, AMoveThatDoesNotPayIsNotMade) {
  AdaptivePolicy policy({.capacity = 64}, Candidates({"fifo", "lru"}));
  Driver d{policy, 64};
  ObjectId fresh = 1'000'000;
  HotAndStreamUntil(d, fresh, [&] { return policy.Rehearsing().has_value(); });
  ASSERT_TRUE(policy.Rehearsing().has_value());
  for (int i = 0; i < 10'000 && policy.Rehearsing(); ++i) d.Reference(fresh++);
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  EXPECT_FALSE(policy.Rehearsing().has_value());
  EXPECT_EQ(policy.Moves(), 0u);
  EXPECT_EQ(policy.RejectedMoves(), 1u);
  EXPECT_EQ(policy.Followed(), 0u);
  EXPECT_EQ(policy.Live().Name(), "fifo");
}

TEST(AdaptivePolicyTest, EqualCandidatesNeverMove) {
  AdaptivePolicy policy({.capacity = 100}, Candidates({"lru", "lru"}));
  Driver d{policy, 100};
  std::mt19937 rng(3);
  std::uniform_int_distribution<ObjectId> key(0, 400);
  for (int i = 0; i < 200'000; ++i) d.Reference(key(rng));
  EXPECT_EQ(policy.Moves(), 0u);
  EXPECT_FALSE(policy.Timeline().empty());
}

TEST(AdaptivePolicyTest, TheTimelineHasARatioPerCandidatePerWindow) {
  AdaptivePolicy policy({.capacity = 64});
  Driver d{policy, 64};
  HotAndStream(50, [&](ObjectId id) { d.Reference(id); });
  ASSERT_FALSE(policy.Timeline().empty());
  uint64_t last = 0;
  for (const auto& point : policy.Timeline()) {
    EXPECT_EQ(point.ratios.size(), AdaptiveCandidates().size());
    EXPECT_GT(point.refs, last);
    last = point.refs;
    for (float r : point.ratios) {
      EXPECT_GE(r, 0.0f);
      EXPECT_LE(r, 1.0f);
    }
  }
  EXPECT_EQ(policy.SampleRate(), 1.0);  // a small cache is simulated in full
}

TEST(AdaptivePolicyTest, ALargeCacheIsSampled) {
  const uint64_t objects = 4 * AdaptivePolicy::kMiniObjects;
  AdaptivePolicy policy({.capacity = objects}, Candidates({"lru", "fifo"}));
  for (ObjectId id = 0; id < objects; ++id) policy.Insert(id, 1);
  EXPECT_LT(policy.SampleRate(), 0.5);
  EXPECT_GT(policy.SampleRate(), 0.0);
  EXPECT_EQ(policy.Count(), objects);
}

// The victim's entry leaves at the next call (evicted_id_), but the policy
// never shows it: not contained, not counted, and its id can come back at once,
// as a page of a new chain whose parent was the victim's parent.
TEST(AdaptivePolicyTest, AVictimIsGoneAtOnce) {
  AdaptivePolicy policy({.capacity = 4}, Candidates({"lru", "fifo"}));
  policy.Insert(1, 1);
  policy.Insert(2, 1, {.parent = 1});
  policy.Insert(3, 1);
  const std::optional<ObjectId> victim = policy.Evict();
  ASSERT_TRUE(victim.has_value());
  EXPECT_FALSE(policy.Contains(*victim));
  EXPECT_EQ(policy.Count(), 2u);
  EXPECT_EQ(policy.UsedSize(), 2u);
  policy.Insert(*victim, 1);
  EXPECT_TRUE(policy.Contains(*victim));
  EXPECT_EQ(policy.Count(), 3u);
  // Evicted again and removed before any other call: Remove of a gone id is a no-op.
  const std::optional<ObjectId> again = policy.Evict();
  ASSERT_TRUE(again.has_value());
  policy.Remove(*again);
  EXPECT_FALSE(policy.Contains(*again));
  EXPECT_EQ(policy.Count(), 2u);
}

// Grows through many doublings of the table (and drops of the sampling rate)
// with chains, removals, evictions and reads interleaved, checked against a
// plain map of what is tracked and which parent each page keeps.
TEST(AdaptivePolicyTest, StaysCorrectWhileItsTableGrows) {
  AdaptivePolicy policy({.capacity = 150'000}, Candidates({"prefix-lru", "lru"}));
  std::unordered_map<ObjectId, ObjectId> parent_of;  // tracked id -> its parent
  std::unordered_map<ObjectId, size_t> at;           // tracked id -> its index in `live`
  std::vector<ObjectId> live;
  std::mt19937_64 rng(5);
  ObjectId next = 1;
  auto forget = [&](ObjectId id) {
    parent_of.erase(id);
    live[at.at(id)] = live.back();
    at[live.back()] = at.at(id);
    live.pop_back();
    at.erase(id);
  };
  for (int step = 0; step < 120'000; ++step) {
    const uint64_t r = rng() % 16;
    if (r < 10 || live.empty()) {
      // A chain of 1-6 pages, each the child of the one before.
      ObjectId parent = kNoParent;
      for (uint64_t n = 1 + rng() % 6; n > 0; --n, ++next) {
        policy.Insert(next, 1, {.parent = parent});
        parent_of[next] = parent;
        at[next] = live.size();
        live.push_back(next);
        parent = next;
      }
    } else if (r < 12) {
      const ObjectId id = live[rng() % live.size()];
      policy.Remove(id);
      forget(id);
    } else if (r < 13) {
      const std::optional<ObjectId> victim = policy.Evict();
      ASSERT_TRUE(victim.has_value());
      ASSERT_TRUE(parent_of.contains(*victim));
      forget(*victim);
    } else {
      policy.Access(live[rng() % live.size()]);
    }
    if (step % 4096 == 0 || step == 119'999) {
      ASSERT_EQ(policy.Count(), parent_of.size());
      for (const auto& [id, parent] : parent_of) {
        ASSERT_TRUE(policy.Contains(id));
        ASSERT_EQ(policy.ParentOf(id), parent_of.contains(parent) ? parent : kNoParent);
      }
      ASSERT_FALSE(policy.Contains(next));
    }
  }
  EXPECT_GT(policy.Count(), 100'000u);
  EXPECT_LT(policy.SampleRate(), 0.25);
}

// When the sampling rate drops, every anchor is recomputed from the chains
// live at that moment. Settled as they are read and a few per insert (while
// chains are cut by removals), they give the simulations exactly what
// settling them all at the rate change gives.
TEST(AdaptivePolicyTest, AnchorsSettledLazilyMatchAnchorsSettledAtOnce) {
  const auto candidates = Candidates({"prefix-lru", "learned", "lru"});
  AdaptivePolicy lazy({.capacity = 60'000}, candidates);
  AdaptivePolicy eager({.capacity = 60'000}, candidates);
  std::mt19937_64 rng(9);
  std::vector<std::vector<ObjectId>> chains;
  ObjectId next = 1;
  bool pending_seen = false;
  for (int step = 0; step < 60'000; ++step) {
    const uint64_t r = rng() % 8;
    std::vector<std::function<void(AdaptivePolicy&)>> calls;
    if (r < 4 || chains.empty()) {
      // A new chain, or one extended from a prefix of a stored one.
      std::vector<ObjectId> chain;
      if (!chains.empty() && r < 2) {
        const auto& base = chains[rng() % chains.size()];
        chain.assign(base.begin(), base.begin() + 1 + rng() % base.size());
      }
      for (uint64_t n = 1 + rng() % 5; n > 0; --n) chain.push_back(next++);
      chains.push_back(chain);
      for (size_t i = 0; i < chain.size(); ++i) {
        const ObjectId id = chain[i];
        const ObjectId parent = i == 0 ? kNoParent : chain[i - 1];
        calls.push_back([=](AdaptivePolicy& p) {
          if (p.Contains(id)) {
            p.Access(id);
          } else {
            p.Insert(id, 1, {.parent = parent});
          }
        });
      }
    } else if (r < 6) {
      // Cuts a chain: its first page leaves.
      const ObjectId id = chains[rng() % chains.size()].front();
      calls.push_back([=](AdaptivePolicy& p) { p.Remove(id); });
    } else {
      const auto& chain = chains[rng() % chains.size()];
      for (ObjectId id : chain) {
        calls.push_back([=](AdaptivePolicy& p) {
          if (p.Contains(id)) p.Access(id);
        });
      }
    }
    for (const auto& call : calls) {
      call(lazy);
      call(eager);
      eager.SettleAllAnchors();
      pending_seen = pending_seen || lazy.SettlingAnchors();
      ASSERT_FALSE(eager.SettlingAnchors());
    }
  }
  EXPECT_TRUE(pending_seen);
  EXPECT_LT(lazy.SampleRate(), 0.5);
  ASSERT_EQ(lazy.Timeline().size(), eager.Timeline().size());
  for (size_t i = 0; i < lazy.Timeline().size(); ++i) {
    ASSERT_EQ(lazy.Timeline()[i].refs, eager.Timeline()[i].refs);
    ASSERT_EQ(lazy.Timeline()[i].ratios, eager.Timeline()[i].ratios) << i;
  }
  EXPECT_GT(lazy.Timeline().size(), 10u);
}

// A page written right after its parent was evicted to make room for it (as a
// small cache does within one request) still hangs below that parent in the
// simulations: reading it again without its parent is no prefix hit there,
// as it is none in the cache.
TEST(AdaptivePolicyTest, APageWhoseParentJustMadeRoomKeepsItsChain) {
  AdaptivePolicy policy({.capacity = 1}, Candidates({"lru"}));
  for (ObjectId root = 0; root < 2000; root += 2) {
    if (root > 0) ASSERT_EQ(policy.Evict(), root - 1);  // the last round's page
    policy.Insert(root, 1);
    ASSERT_EQ(policy.Evict(), root);
    policy.Insert(root + 1, 1, {.parent = root});
    for (int i = 0; i < 5; ++i) policy.Access(root + 1);
  }
  ASSERT_FALSE(policy.Timeline().empty());
  for (const auto& point : policy.Timeline()) EXPECT_EQ(point.ratios[0], 0.0f);
}

}  // namespace
}  // namespace crescent::cache
