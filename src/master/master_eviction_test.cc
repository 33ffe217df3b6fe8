// Eviction through the master: synchronous eviction in PutStart, NO_SPACE only
// when nothing is evictable, watermark rounds in RunMaintenance, the five
// policies behind config.eviction_policy, LRU order and leaf-first chains.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <thread>

#include "master/master_test_util.h"
#include "master/pausing_clock_for_test.h"

namespace crescent::master::testing {
namespace {

constexpr uint64_t kPage = 4096;  // a whole number of 64-byte granules

// Tests here advance the clock past leases; the store node must not be declared
// dead meanwhile (nothing heartbeats in these tests).
class EvictionTest : public MasterTest {
 protected:
  EvictionTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }
};

// Keys of `keys` that Exists() reports present (Exists grants no lease).
std::vector<std::string> Present(MasterService& m, const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    auto e = m.Exists(k);
    if (e.ok() && *e) out.push_back(k);
  }
  return out;
}

TEST_F(EvictionTest, FullSegmentKeepsPutsSucceeding) {
  Mount("seg-a", 16 * kPage);
  auto keys = Keys("k", 100);
  for (const auto& k : keys) {
    ASSERT_TRUE(Put(k, kPage).ok()) << k;
    MasterStats s = master().Stats();
    EXPECT_LE(s.used_bytes, s.capacity_bytes);
    EXPECT_LE(s.objects, 16u);
    EXPECT_TRUE(*master().Exists(k)) << "the object just put must be live";
  }
  EXPECT_EQ(master().Stats().objects, 16u);
  EXPECT_EQ(master().Stats().used_bytes, 16 * kPage);
  EXPECT_EQ(master().counters().evictions.load(), 84u);
  EXPECT_EQ(master().counters().evicted_bytes.load(), 84 * kPage);
  // Nothing was read, so LRU keeps exactly the 16 newest.
  std::vector<std::string> expected(keys.end() - 16, keys.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(master().List(""), expected);
  for (size_t i = 0; i < 84; ++i) {
    EXPECT_EQ(master().GetReplicaList(keys[i]).status().code(), ErrorCode::kObjectNotFound);
  }
}

TEST_F(EvictionTest, EvictionFreesEveryReplica) {
  Mount("seg-a", 8 * kPage, "node-a");
  Mount("seg-b", 8 * kPage, "node-b");
  PutConfig two;
  two.replica_count = 2;
  for (const auto& k : Keys("k", 30)) ASSERT_TRUE(Put(k, kPage, two).ok()) << k;
  EXPECT_EQ(master().Stats().objects, 8u);
  EXPECT_EQ(master().Stats().used_bytes, 16 * kPage);
  for (const SegmentInfo& seg : master().ListSegments()) EXPECT_EQ(seg.used_bytes, 8 * kPage);
  EXPECT_EQ(master().counters().evicted_bytes.load(), 22 * 2 * kPage);
  EXPECT_EQ(master().GetReplicaList("k29")->replicas.size(), 2u);
}

TEST_F(EvictionTest, NoSpaceOnlyWhenEverythingIsLeased) {
  config_.lease_ms = 1000;
  Mount("seg-a", 4 * kPage);
  auto keys = Keys("k", 4);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, kPage).ok());
  for (const auto& k : keys) ASSERT_TRUE(Readable(k));  // four read leases
  EXPECT_EQ(master().PutStart("new", kPage, {}).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(master().Stats().used_bytes, 4 * kPage);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(Present(master(), keys), keys);
  EXPECT_EQ(master().counters().evictions.load(), 0u);

  clock_.Advance(1000 + config_.capability_grace_ms);  // every lease, and its grace, has run out
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_EQ(master().counters().evictions.load(), 1u);
  EXPECT_EQ(Present(master(), keys).size(), 3u);
}

TEST_F(EvictionTest, SynchronousEvictionSkipsLeasedObjects) {
  Mount("seg-a", 4 * kPage);
  auto keys = Keys("k", 4);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, kPage).ok());
  // k0 is the LRU victim, but a lease protects it: k1 goes instead.
  ASSERT_TRUE(Readable("k0"));
  ASSERT_TRUE(Put("new", kPage).ok());
  EXPECT_TRUE(*master().Exists("k0"));
  EXPECT_FALSE(*master().Exists("k1"));
  EXPECT_TRUE(*master().Exists("new"));
}

// A victim read within its lease and the grace would only be held: its space
// comes free a second later, not for the put that evicted it. A put evicts
// victims no capability can reach first, so reads neither cost the cache the
// pages they touched nor leave it short of room.
TEST_F(EvictionTest, PutsEvictUnreachableVictimsBeforeHoldingSpace) {
  config_.eviction_policy = "lru";
  config_.high_watermark = 1.0;  // only puts evict
  Mount("seg-a", 64 * kPage);
  const auto read = Keys("r", 32);
  const auto unread = Keys("w", 32);
  for (const auto& k : read) ASSERT_TRUE(Put(k, kPage).ok());
  for (const auto& k : read) ASSERT_TRUE(Readable(k));  // the least recent: LRU's first victims
  for (const auto& k : unread) ASSERT_TRUE(Put(k, kPage).ok());
  clock_.Advance(master().LeaseMs(kPage) +
                 config_.capability_grace_ms / 2);  // leases over, grace not
  for (const auto& k : Keys("n", 32)) ASSERT_TRUE(Put(k, kPage).ok()) << k;
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(Present(master(), read), read);
  EXPECT_TRUE(Present(master(), unread).empty());
}

// A put stream many times the segment's size, with every fourth page read
// right after its put, at default leases and grace: no put is refused, and
// no evicted page's space waits out a grace (the read pages, evicted a little
// after their leases, once did: a fifth of the segment held at any time).
TEST_F(EvictionTest, ReadsAtDefaultGraceDoNotStarveAFastPutStream) {
  config_.eviction_policy = "lru";
  Mount("seg-a", 64 * kPage);
  uint64_t no_space = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "p" + std::to_string(i);
    const Status s = Put(key, kPage);
    if (s.code() == ErrorCode::kNoSpace) ++no_space;
    if (s.ok() && i % 4 == 0) EXPECT_TRUE(Readable(key)) << key;
    clock_.Advance(10);
    if (i % 5 == 0) master().RunMaintenance();
  }
  EXPECT_EQ(no_space, 0u);
  EXPECT_EQ(master().Stats().held_bytes, 0u);
}

TEST_F(EvictionTest, PendingPutsAreNeverEvicted) {
  Mount("seg-a", 4 * kPage);
  auto keys = Keys("p", 4);
  std::vector<uint64_t> tokens;
  for (const auto& k : keys) {
    auto start = master().PutStart(k, kPage, {});
    ASSERT_TRUE(start.ok());
    tokens.push_back(start->token);
  }
  EXPECT_EQ(master().PutStart("new", kPage, {}).status().code(), ErrorCode::kNoSpace);
  EXPECT_EQ(master().EvictBytes(kPage), 0u);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(master().PutEnd(keys[i], tokens[i]).ok()) << keys[i];
  }
  EXPECT_EQ(Present(master(), keys), keys);
  // Complete now, so they compete.
  EXPECT_TRUE(Put("new", kPage).ok());
}

TEST_F(EvictionTest, EvictBytesFreesAtLeastWhatWasAskedWhenPossible) {
  Mount("seg-a", 16 * kPage);
  for (const auto& k : Keys("k", 16)) ASSERT_TRUE(Put(k, kPage).ok());
  EXPECT_EQ(master().EvictBytes(3 * kPage - 1), 3 * kPage);
  EXPECT_EQ(master().Stats().objects, 13u);
  EXPECT_EQ(master().Stats().used_bytes, 13 * kPage);
  EXPECT_EQ(master().EvictBytes(1 << 30), 13 * kPage);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().EvictBytes(1), 0u);  // nothing left
}

TEST_F(EvictionTest, WatermarkRoundFreesAboutEvictRatio) {
  config_.high_watermark = 0.8;
  config_.evict_ratio = 0.25;
  constexpr uint64_t kObj = 1024;
  Mount("seg-a", 100 * kObj);
  for (const auto& k : Keys("k", 70)) ASSERT_TRUE(Put(k, kObj).ok());
  master().RunMaintenance();  // 70% < 80%: no round
  EXPECT_EQ(master().counters().eviction_rounds.load(), 0u);
  EXPECT_EQ(master().Stats().used_bytes, 70 * kObj);

  for (const auto& k : Keys("more", 20)) ASSERT_TRUE(Put(k, kObj).ok());
  EXPECT_EQ(master().counters().evictions.load(), 0u);  // PutStart never needed to evict
  master().RunMaintenance();                            // 90% ≥ 80%: free 25% of capacity
  EXPECT_EQ(master().counters().eviction_rounds.load(), 1u);
  EXPECT_EQ(master().counters().evictions.load(), 25u);
  EXPECT_EQ(master().counters().evicted_bytes.load(), 25 * kObj);
  EXPECT_EQ(master().Stats().used_bytes, 65 * kObj);
  EXPECT_EQ(master().Stats().objects, 65u);
  // The oldest went.
  EXPECT_FALSE(*master().Exists("k0"));
  EXPECT_FALSE(*master().Exists("k24"));
  EXPECT_TRUE(*master().Exists("k25"));

  master().RunMaintenance();  // 65% now: no second round
  EXPECT_EQ(master().counters().eviction_rounds.load(), 1u);
  EXPECT_EQ(master().Stats().objects, 65u);
}

TEST_F(EvictionTest, WatermarkRoundSparesLeasedObjects) {
  config_.high_watermark = 0.5;
  config_.evict_ratio = 0.5;
  Mount("seg-a", 8 * kPage);
  auto keys = Keys("k", 8);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, kPage).ok());
  for (const auto& k : keys) ASSERT_TRUE(Readable(k));
  master().RunMaintenance();
  EXPECT_EQ(master().counters().eviction_rounds.load(), 1u);
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  EXPECT_EQ(Present(master(), keys), keys);

  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);  // leases and their grace
  master().RunMaintenance();
  EXPECT_EQ(master().counters().eviction_rounds.load(), 2u);
  EXPECT_EQ(master().counters().evictions.load(), 4u);
  EXPECT_EQ(master().Stats().used_bytes, 4 * kPage);
}

TEST_F(EvictionTest, LruOrderIsObservable) {
  config_.eviction_policy = "lru";
  Mount("seg-a", 8 * kPage);
  auto keys = Keys("k", 8);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, kPage).ok());
  ASSERT_TRUE(Readable("k0"));
  ASSERT_TRUE(Readable("k1"));
  // Past the leases: only recency protects k0 and k1 now.
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);
  ASSERT_TRUE(Put("n0", kPage).ok());
  EXPECT_FALSE(*master().Exists("k2")) << "the coldest object goes first";
  EXPECT_TRUE(*master().Exists("k0"));
  ASSERT_TRUE(Put("n1", kPage).ok());
  EXPECT_FALSE(*master().Exists("k3"));
  for (const auto& k : Keys("n", 8)) {
    if (k != "n0" && k != "n1") {
      ASSERT_TRUE(Put(k, kPage).ok());
    }
  }
  // k4..k7 went, then k0 and k1 in the order they were read.
  EXPECT_FALSE(*master().Exists("k0"));
  EXPECT_FALSE(*master().Exists("k1"));
  EXPECT_EQ(master().List(""), Keys("n", 8));
}

TEST_F(EvictionTest, UnknownPolicyIsRejected) {
  config_.eviction_policy = "random-ish";
  auto m = MasterService::Create(config_, clock_);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kInvalidArgument);
  config_.eviction_policy = "";
  EXPECT_EQ(MasterService::Create(config_, clock_).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(EvictionTest, ObjectThatCanNeverFitEvictsNothing) {
  // 1000 bytes manage 960 (15 granules of 64): a 1000-byte object never fits.
  Mount("seg-a", 1000);
  for (const auto& k : Keys("k", 10)) ASSERT_TRUE(Put(k, 64).ok());
  EXPECT_EQ(master().PutStart("huge", 1000, {}).status().code(), ErrorCode::kInvalidSize);
  EXPECT_EQ(master().Stats().objects, 10u);
  EXPECT_EQ(master().counters().evictions.load(), 0u);
}

// ---- Each policy through the master ----

class PolicyEvictionTest : public EvictionTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { config_.eviction_policy = GetParam(); }

  // Checks what must hold under every policy at every step.
  void ExpectInvariants(const std::set<std::string>& must_live) {
    MasterStats s = master().Stats();
    EXPECT_LE(s.used_bytes, s.capacity_bytes);
    std::vector<std::string> live = master().List("");
    EXPECT_EQ(live.size(), s.objects);
    EXPECT_EQ(s.used_bytes, s.objects * kPage);
    for (const auto& k : must_live) {
      EXPECT_TRUE(std::binary_search(live.begin(), live.end(), k)) << k << " was evicted";
    }
  }
};

TEST_P(PolicyEvictionTest, ScanKeepsInvariantsAndSparesLeasedObjects) {
  Mount("seg-a", 32 * kPage);
  // Hot objects, leased by a read: they must survive the whole scan.
  std::set<std::string> hot;
  for (const auto& k : Keys("hot", 4)) {
    ASSERT_TRUE(Put(k, kPage).ok());
    ASSERT_TRUE(Readable(k));
    hot.insert(k);
  }
  auto cold = Keys("cold", 200);
  for (const auto& k : cold) {
    ASSERT_TRUE(Put(k, kPage).ok()) << k;
    std::set<std::string> must = hot;
    must.insert(k);
    ExpectInvariants(must);
  }
  EXPECT_EQ(master().Stats().objects, 32u);
  EXPECT_EQ(master().counters().evictions.load(), 204u - 32u);
  // Every object that is gone is unreadable; the oldest cold page is gone.
  std::vector<std::string> live = master().List("");
  size_t gone = 0;
  for (const auto& k : cold) {
    if (std::binary_search(live.begin(), live.end(), k)) {
      EXPECT_TRUE(Readable(k)) << k;
    } else {
      ++gone;
      EXPECT_EQ(master().GetReplicaList(k).status().code(), ErrorCode::kObjectNotFound) << k;
      EXPECT_FALSE(*master().Exists(k));
    }
  }
  EXPECT_EQ(gone, 200u - 28u);
  EXPECT_FALSE(*master().Exists("cold0"));
}

TEST_P(PolicyEvictionTest, FrequentlyReadObjectOutlivesAOneOffScan) {
  Mount("seg-a", 16 * kPage);
  ASSERT_TRUE(Put("popular", kPage).ok());
  auto cold = Keys("cold", 48);
  for (size_t i = 0; i < cold.size(); ++i) {
    ASSERT_TRUE(Put(cold[i], kPage).ok());
    // Read "popular" now and then; its lease and the grace after it (in which
    // a put spares it, its space not yet reusable) run out before every put,
    // so only the policy's memory of the reads keeps it. FIFO has none.
    if (i % 4 == 0) {
      bool read = Readable("popular");
      if (GetParam() != "fifo") {
        ASSERT_TRUE(read) << "evicted before put " << i;
      }
      clock_.Advance(config_.lease_ms + config_.capability_grace_ms + 1);
    }
  }
  // FIFO ignores reads: its 16-object window passed "popular" long ago.
  EXPECT_EQ(*master().Exists("popular"), GetParam() != "fifo");
  EXPECT_EQ(master().Stats().objects, 16u);
  EXPECT_EQ(master().Stats().used_bytes, 16 * kPage);
}

TEST_P(PolicyEvictionTest, RemovedObjectsLeaveThePolicy) {
  Mount("seg-a", 8 * kPage);
  auto keys = Keys("k", 8);
  for (const auto& k : keys) ASSERT_TRUE(Put(k, kPage).ok());
  for (size_t i = 0; i < 8; i += 2) ASSERT_TRUE(master().Remove(keys[i]).ok());
  // Four holes: four puts need no eviction at all.
  for (const auto& k : Keys("n", 4)) ASSERT_TRUE(Put(k, kPage).ok());
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  // Evicting everything reaches every live object and no removed one.
  EXPECT_EQ(master().EvictBytes(1 << 30), 8 * kPage);
  EXPECT_EQ(master().counters().evictions.load(), 8u);
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyEvictionTest,
                         ::testing::Values("fifo", "lru", "sieve", "s3fifo", "prefix-lru"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- Chains under prefix-lru ----

class ChainEvictionTest : public EvictionTest {
 protected:
  void PutChain(const std::vector<std::string>& keys) {
    std::vector<uint64_t> sizes(keys.size(), kPage);
    std::vector<uint64_t> tokens;
    for (const auto& r : master().BatchPutStart(keys, sizes, {}, /*chain=*/true)) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      tokens.push_back(r->token);
    }
    for (const Status& s : master().BatchPutEnd(keys, tokens)) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }

  // The chain's present pages form a prefix; returns its length.
  size_t ExpectPrefixOnly(const std::vector<std::string>& chain) {
    size_t n = *master().BatchQueryPrefix(chain);
    for (size_t i = 0; i < chain.size(); ++i) {
      EXPECT_EQ(*master().Exists(chain[i]), i < n) << chain[i] << " breaks the prefix";
    }
    return n;
  }
};

TEST_F(ChainEvictionTest, PrefixLruEvictsTailPagesFirst) {
  config_.eviction_policy = "prefix-lru";
  Mount("seg-a", 16 * kPage);
  auto a = Keys("a/", 8);
  auto b = Keys("b/", 8);
  PutChain(a);
  PutChain(b);
  EXPECT_EQ(ExpectPrefixOnly(a), 8u);
  auto loose = Keys("loose", 16);
  for (size_t i = 0; i < loose.size(); ++i) {
    ASSERT_TRUE(Put(loose[i], kPage).ok());
    size_t na = ExpectPrefixOnly(a);
    size_t nb = ExpectPrefixOnly(b);
    // The older chain is eaten from its tail first, then the newer one.
    EXPECT_EQ(na, i < 8 ? 7 - i : 0u) << "after put " << i;
    EXPECT_EQ(nb, i < 8 ? 8u : 15 - i) << "after put " << i;
  }
}

TEST_F(ChainEvictionTest, PrefixLruNeverLeavesAGapUnderRandomPressure) {
  config_.eviction_policy = "prefix-lru";
  Mount("seg-a", 40 * kPage);
  std::vector<std::vector<std::string>> chains;
  for (int c = 0; c < 12; ++c) {
    chains.push_back(Keys("c" + std::to_string(c) + "/", 4 + c % 5));
    PutChain(chains.back());
    // Re-read an older chain in order, as a request reusing its prefix would.
    if (c >= 2) {
      const auto& again = chains[c / 2];
      auto reads = master().BatchGetReplicaList(again, /*prefix_mode=*/true);
      size_t readable = 0;
      while (readable < reads.size() && reads[readable].ok()) ++readable;
      EXPECT_EQ(readable, *master().BatchQueryPrefix(again));
      clock_.Advance(config_.lease_ms + 1);
    }
    for (const auto& chain : chains) ExpectPrefixOnly(chain);
    EXPECT_LE(master().Stats().used_bytes, master().Stats().capacity_bytes);
  }
  EXPECT_GT(master().counters().evictions.load(), 0u);
}

TEST_F(ChainEvictionTest, ChainHeadLeasedKeepsWholePrefixReachable) {
  config_.eviction_policy = "prefix-lru";
  Mount("seg-a", 8 * kPage);
  auto a = Keys("a/", 8);
  PutChain(a);
  // A reader holds the first three pages; pressure takes the rest, tail first.
  auto reads = master().BatchGetReplicaList(std::span(a).first(3), /*prefix_mode=*/true);
  ASSERT_EQ(reads.size(), 3u);
  for (const auto& k : Keys("x", 5)) ASSERT_TRUE(Put(k, kPage).ok());
  EXPECT_EQ(ExpectPrefixOnly(a), 3u);
  EXPECT_EQ(master().PutStart("one-more", kPage, {}).status().code(), ErrorCode::kOk);
  EXPECT_EQ(ExpectPrefixOnly(a), 3u) << "the leased head must not go";
}

TEST_F(ChainEvictionTest, PlainLruBreaksTheChainAtItsHead) {
  // The contrast that motivates prefix-lru: LRU takes the oldest page, the head.
  config_.eviction_policy = "lru";
  Mount("seg-a", 8 * kPage);
  auto a = Keys("a/", 8);
  PutChain(a);
  ASSERT_TRUE(Put("x", kPage).ok());
  EXPECT_FALSE(*master().Exists(a[0]));
  EXPECT_EQ(*master().BatchQueryPrefix(a), 0u);
  EXPECT_TRUE(*master().Exists(a[7]));
}

// Blocks until thread `tid` of this process sleeps (its state in /proc is S):
// the threads it is used on sleep only when they wait for a lock.
void WaitUntilSleeping(pid_t tid) {
  for (;;) {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(stat, line);
    // The state follows the command name, which is in parentheses.
    auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'S') return;
    std::this_thread::yield();
  }
}

// A victim the policy offers while a read of it is in flight: the reader has
// found the object (shard lock held) but not yet touched it, so the policy's
// check sees no lease; the read then completes before the eviction can remove
// the object. The read must win, and the victim must keep its place in the
// policy with its chain parent link; re-admitting it as a new, parentless page
// made its parent a leaf that was evicted next, leaving a gap in the chain.
class ChainEvictionRaceTest : public ChainEvictionTest {
 protected:
  void SetUp() override {
    config_.eviction_policy = "prefix-lru";
    auto created = MasterService::Create(config_, pausing_);
    ASSERT_TRUE(created.ok());
    m_ = std::move(created).value();
  }

  PausingClock pausing_{clock_};
};

TEST_F(ChainEvictionRaceTest, VictimReadDuringEvictionKeepsItsChainParent) {
  Mount("seg-a", 4 * kPage);
  auto a = Keys("a/", 4);
  PutChain(a);  // full: the next put must evict, and a/3 is the only leaf

  pausing_.Arm();
  StatusOr<ReadResult> read = Status(ErrorCode::kInternal, "not run");
  std::thread reader([&] { read = master().GetReplicaList(a[3]); });
  pausing_.WaitUntilPaused();  // found a/3 under its shard lock, not touched yet

  std::atomic<pid_t> evictor_tid{0};
  StatusOr<PutGrant> put = Status(ErrorCode::kInternal, "not run");
  std::thread evictor([&] {
    evictor_tid = static_cast<pid_t>(syscall(SYS_gettid));
    put = master().PutStart("x", kPage, {});
  });
  while (evictor_tid.load() == 0) std::this_thread::yield();
  WaitUntilSleeping(evictor_tid.load());  // waits for the reader's shard lock
  pausing_.Resume();
  reader.join();
  evictor.join();

  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(ExpectPrefixOnly(a), 4u) << "the leased a/3 stays, and so does every page before it";
  // Nothing else was evictable: the put found no space.
  EXPECT_EQ(put.status().code(), ErrorCode::kNoSpace);
}

// On the real clock: four objects read, their leases over but their
// capabilities still live for the grace. A put finds no victim whose space is
// free at once; evicting one only holds its space. Waiting for held space
// (put_wait_for_held_ms), the put evicts one and takes its space when the hold
// ends; without waiting, it evicts every one into held space and fails.
StatusOr<PutGrant> PutIntoReadObjects(int64_t wait_ms, uint64_t* objects_left) {
  constexpr uint64_t kObject = 4096;
  MasterConfig config;
  config.eviction_policy = "lru";
  config.lease_ms = 20;
  config.lease_bytes_per_ms = 0;
  config.capability_grace_ms = 1'500;
  config.put_wait_for_held_ms = wait_ms;
  auto created = MasterService::Create(config, SteadyClock::Instance());
  if (!created.ok()) return created.status();
  MasterService& m = **created;
  EXPECT_TRUE(m.MountSegment({"seg-a", 4 * kObject, "node-a", "node-a:7000", Tier::kDram}).ok());
  for (int i = 0; i < 4; ++i) {
    const std::string key = "k" + std::to_string(i);
    auto start = m.PutStart(key, kObject, {});
    EXPECT_TRUE(start.ok() && m.PutEnd(key, start->token).ok()) << key;
    EXPECT_TRUE(m.GetReplicaList(key).ok()) << key;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past every lease
  StatusOr<PutGrant> put = m.PutStart("new", kObject, {});
  *objects_left = m.Stats().objects;
  return put;
}

TEST(PutWaitTest, APutWaitsForHeldSpaceInsteadOfEvictingEverythingIntoIt) {
  uint64_t left = 0;
  StatusOr<PutGrant> put = PutIntoReadObjects(/*wait_ms=*/5'000, &left);
  EXPECT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(left, 3u) << "one read object made room, the others stay";
}

TEST(PutWaitTest, WithoutWaitingThePutEvictsEveryReadObjectAndIsRefused) {
  uint64_t left = 0;
  StatusOr<PutGrant> put = PutIntoReadObjects(/*wait_ms=*/0, &left);
  EXPECT_EQ(put.status().code(), ErrorCode::kNoSpace) << put.status().ToString();
  EXPECT_EQ(left, 0u);
}

}  // namespace
}  // namespace crescent::master::testing
