// Concurrency: many threads drive one master at once (puts, reads, removes,
// prefix queries, eviction, maintenance, segment churn) and the engine's
// invariants still hold at the end: the allocators account for exactly the live
// replicas, removed keys stay gone, leases are honoured, and every unpinned
// object is still reachable by eviction. Run under TSan in CI.
#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "master/master_test_util.h"
#include "master/object_entry.h"

namespace crescent::master::testing {
namespace {

constexpr int kThreads = 4;

uint64_t RoundUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

class StressTest : public MasterTest {
 public:
  using MasterTest::Keys;  // for the workers' chains (StressWorker)

 protected:
  StressTest() {
    config_.heartbeat_ttl_ms = int64_t{1} << 40;
    config_.put_timeout_ms = int64_t{1} << 40;
  }

  // The allocators' view must equal the sum of the live replicas. Call with no
  // put in flight and nothing running concurrently.
  void ExpectSpaceAccountedFor() {
    MasterStats s = master().Stats();
    EXPECT_EQ(s.pending_puts, 0u);
    uint64_t by_segment = 0;
    for (const SegmentInfo& seg : master().ListSegments()) by_segment += seg.used_bytes;
    EXPECT_EQ(by_segment, s.used_bytes);
    std::vector<std::string> live = master().List("");
    EXPECT_EQ(live.size(), s.objects);
    uint64_t by_object = 0;
    for (const auto& k : live) {
      auto r = master().GetReplicaList(k);
      if (!r.ok()) {
        ADD_FAILURE() << "listed object '" << k << "' is unreadable: " << r.status().ToString();
        continue;
      }
      for (const ReplicaDescriptor& d : r->replicas) {
        EXPECT_EQ(d.length, r->size);
        by_object += RoundUp(d.length, config_.allocation_alignment);
      }
    }
    // Objects removed by force under a lease keep their space until it ends.
    EXPECT_EQ(by_object + s.held_bytes, s.used_bytes);
    EXPECT_LE(s.used_bytes, s.capacity_bytes);
  }
};

// Per-thread bookkeeping for its own key namespace.
struct KeyState {
  bool removed = false;  // Remove() returned ok and it was not put again since
  bool hard = false;     // put hard-pinned (and not removed since)
  TimeMs own_lease = 0;  // latest lease expiry this thread was granted
};

constexpr int kKeys = 48;  // per thread

std::string KeyOf(int t, int i) { return "t" + std::to_string(t) + "/k" + std::to_string(i); }

// What the threads found wrong, counted across them.
struct StressTallies {
  std::atomic<uint64_t> lease_violations{0}, resurrections{0}, bad_results{0};
};

// One thread's random operations: puts, reads (mostly of its own keys),
// removes, prefix queries, eviction, maintenance, time passing, segment
// churn, chains, exists and dropping its whole namespace. `mine` is its keys'
// state, which only it writes.
class StressWorker {
 public:
  StressWorker(MasterService& master, ManualClock& clock, int t, std::vector<KeyState>& mine,
               StressTallies& tallies)
      : master_(master),
        clock_(clock),
        t_(t),
        mine_(mine),
        tallies_(tallies),
        rng_(1234 + t),
        prefix_("t" + std::to_string(t) + "/"),
        extra_("extra-" + std::to_string(t)),
        node_("node-" + std::to_string(t)) {}

  void Run(int ops) {
    for (int op = 0; op < ops; ++op) {
      const int i = static_cast<int>(Uniform(kKeys));
      const std::string key = KeyOf(t_, i);
      const uint64_t r = Uniform(1000);
      if (r < 340) {
        Put(i, key);
      } else if (r < 590) {
        Read(i, key);
      } else if (r < 690) {
        Remove(i, key);
      } else if (r < 770) {
        QueryPrefix();
      } else if (r < 810) {
        master_.EvictBytes(Uniform(8192));
      } else if (r < 830) {
        master_.RunMaintenance();
      } else if (r < 900) {
        clock_.Advance(1 + static_cast<TimeMs>(Uniform(8)));
      } else if (r < 920) {
        ChurnSegment();
      } else if (r < 960) {
        PutChain();
      } else if (r < 995) {
        auto e = master_.Exists(key);
        if (!e.ok() || (*e && mine_[i].removed)) tallies_.resurrections.fetch_add(1);
      } else {  // drop the whole namespace, leases or not
        auto n = master_.RemoveByPrefix(prefix_, /*force=*/true);
        if (!n.ok()) Bad();
        for (auto& st : mine_) st = KeyState{true, false, 0};
      }
    }
  }

 private:
  uint64_t Uniform(uint64_t n) { return static_cast<uint64_t>(rng_() % n); }
  void Bad() { tallies_.bad_results.fetch_add(1); }

  void Put(int i, const std::string& key) {
    PutConfig cfg;
    cfg.replica_count = 1 + static_cast<uint32_t>(Uniform(2));
    uint64_t size = 1 + Uniform(2048);
    if (Uniform(100) < 10) cfg.soft_pin_ttl_ms = 1 + static_cast<int64_t>(Uniform(50));
    if (Uniform(100) < 1) {
      cfg.hard_pin = true;
      size = 64;
    }
    auto s = master_.PutStart(key, size, cfg);
    if (!s.ok()) {
      if (s.status().code() != ErrorCode::kObjectAlreadyExists &&
          s.status().code() != ErrorCode::kNoSpace &&
          s.status().code() != ErrorCode::kUnavailable &&     // its segment went away
          s.status().code() != ErrorCode::kObjectNotReady) {  // the old one's is going
        Bad();
      }
      return;
    }
    for (const ReplicaDescriptor& d : s->replicas) {
      if (d.length != size) Bad();
    }
    if (Uniform(100) < 10) {
      // A concurrent unmount may already have dropped the pending put.
      Status revoke = master_.PutRevoke(key, s->token);
      if (!revoke.ok() && revoke.code() != ErrorCode::kPutNotStarted) Bad();
      return;
    }
    Status end = master_.PutEnd(key, s->token);
    if (end.ok()) {
      mine_[i] = KeyState{false, cfg.hard_pin, 0};
    } else if (end.code() != ErrorCode::kPutNotStarted) {
      Bad();
    }
  }

  // Mostly its own key; one read in four another thread's.
  void Read(int i, const std::string& key) {
    int owner = Uniform(4) == 0 ? static_cast<int>(Uniform(kThreads)) : t_;
    std::string k = owner == t_ ? key : KeyOf(owner, i);
    auto g = master_.GetReplicaList(k);
    if (owner == t_ && mine_[i].removed && g.ok()) tallies_.resurrections.fetch_add(1);
    if (g.ok()) {
      if (g->replicas.empty()) Bad();
      if (owner == t_) mine_[i].own_lease = std::max(mine_[i].own_lease, g->lease_expiry);
    }
  }

  // Its own key, without force: refused while a lease it was granted holds.
  void Remove(int i, const std::string& key) {
    Status s = master_.Remove(key);
    if (s.ok()) {
      TimeMs after = clock_.NowMs();
      if (mine_[i].own_lease > after) tallies_.lease_violations.fetch_add(1);
      mine_[i] = KeyState{true, false, 0};
      if (master_.GetReplicaList(key).ok()) tallies_.resurrections.fetch_add(1);
    } else if (s.code() != ErrorCode::kObjectLeased && s.code() != ErrorCode::kObjectNotFound) {
      Bad();
    }
  }

  // A prefix query over a window of its own keys.
  void QueryPrefix() {
    int from = static_cast<int>(Uniform(kKeys));
    int len = static_cast<int>(Uniform(kKeys - from)) + 1;
    std::vector<std::string> q;
    size_t first_removed = SIZE_MAX;
    for (int j = from; j < from + len; ++j) {
      if (mine_[j].removed && first_removed == SIZE_MAX) first_removed = q.size();
      q.push_back(KeyOf(t_, j));
    }
    if (Uniform(2) == 0) {
      auto n = master_.BatchQueryPrefix(q);
      if (!n.ok() || *n > q.size() || *n > first_removed) Bad();
      return;
    }
    auto got = master_.BatchGetReplicaList(q, /*prefix_mode=*/true);
    // The prefix, then (unless every key was read) the key that ended it.
    size_t readable = 0;
    while (readable < got.size() && got[readable].ok()) ++readable;
    if (readable > first_removed) tallies_.resurrections.fetch_add(1);
    if (got.size() > readable + 1) Bad();
    for (size_t j = 0; j < readable; ++j) {
      auto& st = mine_[from + j];
      st.own_lease = std::max(st.own_lease, got[j]->lease_expiry);
    }
  }

  // Mounts its extra segment, or unmounts it.
  void ChurnSegment() {
    if (!mounted_) {
      auto id = master_.MountSegment({extra_, 16 << 10, node_, node_ + ":1", Tier::kDram});
      mounted_ = id.ok();
      if (!id.ok()) Bad();
    } else {
      if (!master_.UnmountSegment(extra_, node_).ok()) Bad();
      mounted_ = false;
    }
  }

  // A chain of fresh pages.
  void PutChain() {
    std::vector<std::string> chain =
        StressTest::Keys(prefix_ + "c" + std::to_string(chains_++) + "/", 4);
    std::vector<uint64_t> sizes(chain.size(), 256);
    auto starts = master_.BatchPutStart(chain, sizes, {}, /*chain=*/true);
    std::vector<std::string> started;
    std::vector<uint64_t> tokens;
    for (size_t j = 0; j < chain.size(); ++j) {
      if (!starts[j].ok()) continue;
      started.push_back(chain[j]);
      tokens.push_back(starts[j]->token);
    }
    for (const Status& s : master_.BatchPutEnd(started, tokens)) {
      if (!s.ok() && s.code() != ErrorCode::kPutNotStarted) Bad();
    }
  }

  MasterService& master_;
  ManualClock& clock_;
  const int t_;
  std::vector<KeyState>& mine_;
  StressTallies& tallies_;
  std::mt19937_64 rng_;
  const std::string prefix_, extra_, node_;
  bool mounted_ = false;
  int chains_ = 0;
};

TEST_F(StressTest, RandomOperationsKeepInvariants) {
  config_.num_shards = 8;
  config_.lease_ms = 20;
  config_.bloom_expected_keys = 8;    // rebuilt several times along the way (at 32, 1 run in
                                      // 40 never had over 32 live objects when maintenance ran)
  config_.touch_queue_capacity = 64;  // often full
  config_.high_watermark = 0.9;
  config_.evict_ratio = 0.1;
  config_.eviction_policy = "prefix-lru";
  Mount("base", 64 << 10, "node-base");
  master().StartBackground(/*interval_ms=*/1);

  constexpr int kOps = 3000;
  std::vector<std::vector<KeyState>> states(kThreads, std::vector<KeyState>(kKeys));
  StressTallies tallies;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(
        [&, t] { StressWorker(master(), clock_, t, states[t], tallies).Run(kOps); });
  }
  for (auto& th : threads) th.join();
  master().StopBackground();

  EXPECT_EQ(tallies.lease_violations.load(), 0u);
  EXPECT_EQ(tallies.resurrections.load(), 0u);
  EXPECT_EQ(tallies.bad_results.load(), 0u);
  EXPECT_GT(master().counters().evictions.load(), 0u);
  EXPECT_GE(master().counters().bloom_rebuilds.load(), 1u);
  ExpectSpaceAccountedFor();

  // Removed keys are gone for good; every live object answers present (the
  // Bloom filter survived its rebuilds without a false negative).
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kKeys; ++i) {
      if (states[t][i].removed) {
        EXPECT_FALSE(Readable(KeyOf(t, i))) << KeyOf(t, i);
      }
    }
  }
  std::vector<std::string> live = master().List("");
  for (const auto& k : live) EXPECT_TRUE(*master().Exists(k)) << k;
  EXPECT_EQ(*master().BatchQueryPrefix(live), live.size());

  // Every unpinned object is still known to the eviction policy: evicting
  // everything leaves exactly the hard-pinned ones.
  clock_.Advance(int64_t{1} << 30);  // all leases and soft pins are over
  master().EvictBytes(uint64_t{1} << 40);
  for (const auto& k : master().List("")) {
    int t = k[1] - '0';
    bool hard = false;
    if (size_t at = k.find("/k"); at != std::string::npos) {
      hard = states[t][std::stoi(k.substr(at + 2))].hard;
    }
    EXPECT_TRUE(hard) << "unpinned object '" << k << "' escaped eviction";
  }
  ExpectSpaceAccountedFor();
  master().RemoveAll(/*force=*/true);
  // ExpectSpaceAccountedFor read every survivor, so the forced removes hold
  // their space until those leases (and their grace) are over; revoked and
  // timed-out puts hold theirs until their deadlines (and the grace).
  clock_.Advance(std::max(config_.lease_ms, config_.put_timeout_ms) + config_.capability_grace_ms);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  for (const SegmentInfo& seg : master().ListSegments()) EXPECT_EQ(seg.allocations, 0u);
}

TEST_F(StressTest, ConcurrentReadAndRemoveNeverRemoveALeasedObject) {
  // Clock frozen: a lease, once granted, outlives the test, so a key that any
  // read returned can never be removed without force.
  config_.num_shards = 4;
  Mount("seg", 1 << 20);
  constexpr int kN = 256;
  auto keys = Keys("k", kN);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, 64).ok());
  constexpr int kReadable = kN * 3 / 4;  // the rest are only ever removed
  std::vector<std::atomic<bool>> read_ok(kN), removed(kN);
  std::atomic<uint64_t> violations{0};
  // Some keys are read before the race starts: those can never be removed.
  for (int i = 0; i < kReadable; i += 8) {
    ASSERT_TRUE(Readable(keys[i]));
    read_ok[i].store(true);
  }
  std::atomic<int> ready{0};
  auto start_together = [&] {
    ready.fetch_add(1);
    while (ready.load() < 4) std::this_thread::yield();
  };

  auto reader = [&](int seed) {
    std::mt19937 rng(seed);
    start_together();
    for (int n = 0; n < 4000; ++n) {
      int i = static_cast<int>(rng() % kReadable);
      bool gone = removed[i].load(std::memory_order_acquire);
      auto r = master().GetReplicaList(keys[i]);
      if (r.ok()) {
        if (gone) violations.fetch_add(1);  // read after a successful remove
        read_ok[i].store(true, std::memory_order_release);
      }
    }
  };
  auto remover = [&](int seed) {
    std::mt19937 rng(seed);
    start_together();
    for (int n = 0; n < 4000; ++n) {
      int i = static_cast<int>(rng() % kN);
      bool was_read = read_ok[i].load(std::memory_order_acquire);
      Status s = master().Remove(keys[i]);
      if (s.ok()) {
        if (was_read) violations.fetch_add(1);  // removed under a lease
        removed[i].store(true, std::memory_order_release);
      } else if (s.code() != ErrorCode::kObjectLeased && s.code() != ErrorCode::kObjectNotFound) {
        violations.fetch_add(1);
      }
    }
  };
  std::thread threads[] = {std::thread(reader, 1), std::thread(reader, 2), std::thread(remover, 3),
                           std::thread(remover, 4)};
  for (auto& th : threads) th.join();
  EXPECT_EQ(violations.load(), 0u);

  size_t read = 0, gone = 0;
  for (int i = 0; i < kN; ++i) {
    // A read that succeeded preceded any removal, so the two exclude each other.
    EXPECT_FALSE(read_ok[i] && removed[i]) << keys[i];
    EXPECT_EQ(*master().Exists(keys[i]), !removed[i]) << keys[i];
    if (read_ok[i]) {
      ++read;
      EXPECT_EQ(master().Remove(keys[i]).code(), ErrorCode::kObjectLeased);
    }
    gone += removed[i] ? 1 : 0;
  }
  EXPECT_GT(read, 0u);
  EXPECT_GT(gone, 0u);
  // Once the leases run out, everything left is removable.
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);
  for (int i = 0; i < kN; ++i) {
    if (!removed[i]) {
      EXPECT_TRUE(master().Remove(keys[i]).ok()) << keys[i];
    }
  }
  master().RunMaintenance();  // fenced space of the removes made under leases
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(StressTest, RemoveNeverBeatsALeaseOnAMovingClock) {
  config_.num_shards = 4;
  config_.lease_ms = 5;
  Mount("seg", 1 << 20);
  constexpr int kN = 64;
  auto keys = Keys("k", kN);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, 64).ok());
  std::vector<std::atomic<TimeMs>> lease_max(kN);
  std::vector<std::atomic<TimeMs>> removed_at(kN);
  for (int i = 0; i < kN; ++i) removed_at[i].store(0);
  std::atomic<bool> stop{false};

  std::thread ticker([&] {
    while (!stop.load()) {
      clock_.Advance(1);
      std::this_thread::yield();
    }
  });
  auto reader = [&](int seed) {
    std::mt19937 rng(seed);
    for (int n = 0; n < 5000; ++n) {
      int i = static_cast<int>(rng() % kN);
      auto r = master().GetReplicaList(keys[i]);
      if (!r.ok()) continue;
      TimeMs cur = lease_max[i].load();
      while (cur < r->lease_expiry && !lease_max[i].compare_exchange_weak(cur, r->lease_expiry)) {
      }
    }
  };
  auto remover = [&](int seed) {
    std::mt19937 rng(seed);
    for (int n = 0; n < 5000; ++n) {
      int i = static_cast<int>(rng() % kN);
      if (master().Remove(keys[i]).ok()) removed_at[i].store(clock_.NowMs());
    }
  };
  std::thread threads[] = {std::thread(reader, 1), std::thread(reader, 2), std::thread(reader, 3),
                           std::thread(remover, 4)};
  for (auto& th : threads) th.join();
  stop.store(true);
  ticker.join();

  // Every read that succeeded came before the key's removal, so its lease must
  // have run out by the time the remove decided.
  for (int i = 0; i < kN; ++i) {
    TimeMs at = removed_at[i].load();
    if (at != 0) {
      EXPECT_LE(lease_max[i].load(), at) << keys[i];
    }
  }
}

TEST(DeferredTouchTest, DelayedReaderNeverShortensAnotherReadersLease) {
  // Two readers under the shared lock: one reads the clock at 2000 and touches;
  // the other read the clock earlier (1000) but touches after it. The lease
  // granted to the first (2000 + lease) must survive the flush.
  ObjectEntry e;
  EXPECT_TRUE(e.Touch(2000));
  EXPECT_FALSE(e.Touch(1000));
  e.FlushTouch(/*lease_ms=*/100);
  EXPECT_TRUE(e.Leased(2099));
  EXPECT_FALSE(e.Leased(2100));
}

TEST_F(StressTest, BloomRebuildRacingWritersLosesNoKey) {
  config_.num_shards = 8;
  config_.bloom_expected_keys = 16;
  Mount("seg", 16 << 20);
  constexpr int kPerThread = 1500;
  std::atomic<bool> done{false};
  // Two maintenance passes at once (the background thread and an operator's
  // manual pass, say): their rebuilds must not interleave.
  auto maintain = [&] {
    while (!done.load()) master().RunMaintenance();
  };
  std::thread maintenance(maintain), maintenance2(maintain);
  auto writer = [&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      std::string k = "w" + std::to_string(t) + "/" + std::to_string(i);
      ASSERT_TRUE(Put(k, 64).ok()) << k;
      if (i % 3 == 0) {
        ASSERT_TRUE(master().Remove(k).ok()) << k;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(3);
  for (int t = 0; t < 3; ++t) threads.emplace_back(writer, t);
  for (auto& th : threads) th.join();
  done.store(true);
  maintenance.join();
  maintenance2.join();
  master().RunMaintenance();

  // How many rebuilds overlapped the writers depends on scheduling; at least
  // the last pass rebuilt, and the filter covers every live key.
  EXPECT_GE(master().counters().bloom_rebuilds.load(), 1u);
  EXPECT_GE(master().Stats().bloom_design_keys, master().Stats().objects);
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      std::string k = "w" + std::to_string(t) + "/" + std::to_string(i);
      EXPECT_EQ(*master().Exists(k), i % 3 != 0) << k;
    }
  }
  EXPECT_EQ(master().Stats().objects, 3u * (kPerThread - kPerThread / 3));
}

TEST_F(StressTest, PutRacingUnmountNeverPublishesAnObjectWithoutReplica) {
  // One node flaps its segment while puts aim at it. Whatever interleaving
  // happens, a completed object either has a live replica or is gone.
  config_.num_shards = 4;
  Mount("base", 1 << 20, "node-base");
  std::atomic<bool> done{false};
  std::thread flapper([&] {
    while (!done.load()) {
      if (master().MountSegment({"flap", 1 << 20, "node-f", "f:1", Tier::kDram}).ok()) {
        std::this_thread::yield();
        EXPECT_TRUE(master().UnmountSegment("flap", "node-f").ok());
      }
    }
  });
  auto putter = [&](int t) {
    PutConfig cfg;
    cfg.preferred_segment = "flap";
    for (int i = 0; i < 3000; ++i) {
      std::string k = "p" + std::to_string(t) + "/" + std::to_string(i);
      if (auto start = master().PutStart(k, 64, cfg); start.ok()) {
        Status s = master().PutEnd(k, start->token);
        EXPECT_TRUE(s.ok() || s.code() == ErrorCode::kPutNotStarted) << s.ToString();
      }
    }
  };
  std::thread p0(putter, 0), p1(putter, 1);
  p0.join();
  p1.join();
  done.store(true);
  flapper.join();
  EXPECT_GT(master().counters().dropped_objects.load(), 0u);
  ExpectSpaceAccountedFor();
}

TEST_F(StressTest, SimultaneousMaintenancePassesRebuildTheBloomFilterOnce) {
  config_.num_shards = 8;
  config_.bloom_expected_keys = 16;
  Mount("seg", 16 << 20);
  std::vector<std::string> keys;
  constexpr int kRounds = 8;
  constexpr int kPasses = 4;
  for (int round = 0; round < kRounds; ++round) {
    // Outgrow the current design load, then let several passes race.
    uint64_t design = master().Stats().bloom_design_keys;
    while (master().Stats().objects <= design) {
      keys.push_back("r" + std::to_string(round) + "/" + std::to_string(keys.size()));
      ASSERT_TRUE(Put(keys.back(), 64).ok());
    }
    std::atomic<int> ready{0};
    std::vector<std::thread> passes;
    passes.reserve(kPasses);
    for (int p = 0; p < kPasses; ++p) {
      passes.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < kPasses) std::this_thread::yield();
        master().RunMaintenance();
      });
    }
    for (auto& th : passes) th.join();
    EXPECT_EQ(master().counters().bloom_rebuilds.load(), static_cast<uint64_t>(round + 1));
    EXPECT_GE(master().Stats().bloom_design_keys, keys.size());
    for (const auto& k : keys) ASSERT_TRUE(*master().Exists(k)) << k << " in round " << round;
  }
}

}  // namespace
}  // namespace crescent::master::testing
