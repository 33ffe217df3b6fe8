// Session hints (MasterService::EndSession): which objects a hint marks, that
// the reads queued before it reach the policies before the mark does, that
// it is logged, and that a restore marks again what the log holds. The
// engine's policies are made by a test policy (MasterConfig::make_policy)
// that evicts marked objects first and forgets a mark on a read, as the
// issue asks every policy to; so eviction shows what the engine told it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"

namespace crescent::master {
namespace {

using testing::MemoryLog;

// LRU, but a marked object goes first; a read forgets its mark.
class MarkedFirst final : public cache::EvictionPolicy {
 public:
  MarkedFirst() : lru_(cache::MakePolicy("lru").value()) {}
  void Insert(ObjectId id, uint64_t size, const cache::InsertInfo& info) override {
    lru_->Insert(id, size, info);
  }
  void Access(ObjectId id) override {
    std::erase(marked_, id);
    lru_->Access(id);
  }
  void Remove(ObjectId id) override {
    std::erase(marked_, id);
    lru_->Remove(id);
  }
  std::optional<ObjectId> Evict(const cache::SpareFn& spare) override {
    for (ObjectId id : std::vector<ObjectId>(marked_)) {
      if (spare && spare(id)) continue;
      Remove(id);
      return id;
    }
    return lru_->Evict(spare);
  }
  void EndSession(ObjectId id) override {
    if (lru_->Contains(id) && std::find(marked_.begin(), marked_.end(), id) == marked_.end()) {
      marked_.push_back(id);
    }
  }
  bool Contains(ObjectId id) const override { return lru_->Contains(id); }
  size_t Count() const override { return lru_->Count(); }
  uint64_t UsedSize() const override { return lru_->UsedSize(); }
  void SetCapacity(uint64_t capacity) override { lru_->SetCapacity(capacity); }
  std::string_view Name() const override { return "marked-first"; }
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const override {
    return lru_->VisitInEvictionOrder(fn);
  }

 private:
  std::unique_ptr<cache::EvictionPolicy> lru_;
  std::vector<ObjectId> marked_;
};

constexpr uint64_t kSegBytes = 64 * 1024;
constexpr uint64_t kObject = 4096;

class MasterSessionTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    oplog_ = &log_;
    config_.heartbeat_ttl_ms = 1'000'000;  // the node stays alive while the clock moves
    config_.make_policy = [](std::string_view, const cache::PolicyOptions&) {
      return StatusOr<std::unique_ptr<cache::EvictionPolicy>>(std::make_unique<MarkedFirst>());
    };
  }
  void MountA() { ASSERT_TRUE(master().MountSegment(Spec("a:1#e1", 11)).ok()); }
  static SegmentSpec Spec(const std::string& endpoint, uint64_t token) {
    return {"seg-a", kSegBytes, "node-a", endpoint, Tier::kDram, token};
  }
  // Past every lease a read granted, so that eviction may take any object.
  void LeasesEnd() { clock_.Advance(config_.lease_ms + config_.capability_grace_ms + 1); }
  // Evicts one object of `m` and says which of `keys` went.
  static std::vector<std::string> EvictOne(MasterService& m, const std::vector<std::string>& keys) {
    EXPECT_GE(m.EvictBytes(1), kObject);
    std::vector<std::string> gone;
    for (const std::string& k : keys) {
      if (!*m.Exists(k)) gone.push_back(k);
    }
    return gone;
  }
  StatusOr<size_t> End(const std::vector<std::string>& keys) { return master().EndSession(keys); }

  MemoryLog log_;
};

using Names = std::vector<std::string>;

TEST_F(MasterSessionTest, AMarkedObjectIsTheFirstVictim) {
  MountA();
  for (const std::string& k : {"a", "b", "c"}) ASSERT_TRUE(Put(k, kObject).ok());
  ASSERT_EQ(*End({"b"}), 1u);
  EXPECT_EQ(EvictOne(master(), {"a", "b", "c"}), Names{"b"}) << "not the oldest, a";
}

// The engine reads the pages of a turn and then says the conversation ended:
// the read, deferred, must reach the policy before the mark, or replaying it
// later would clear the mark as if a new request had read the page.
TEST_F(MasterSessionTest, AReadBeforeTheHintDoesNotClearIt) {
  MountA();
  for (const std::string& k : {"a", "b", "c"}) ASSERT_TRUE(Put(k, kObject).ok());
  ASSERT_TRUE(master().GetReplicaList("b").ok());  // queued, not yet flushed
  LeasesEnd();
  ASSERT_EQ(*End({"b"}), 1u);
  EXPECT_EQ(EvictOne(master(), {"a", "b", "c"}), Names{"b"});
}

TEST_F(MasterSessionTest, AReadAfterTheHintClearsIt) {
  MountA();
  for (const std::string& k : {"a", "b", "c"}) ASSERT_TRUE(Put(k, kObject).ok());
  ASSERT_EQ(*End({"b"}), 1u);
  ASSERT_TRUE(master().GetReplicaList("b").ok());  // another conversation uses it
  LeasesEnd();
  EXPECT_EQ(EvictOne(master(), {"a", "b", "c"}), Names{"a"});
}

TEST_F(MasterSessionTest, OnlyStoredObjectsThatAPolicyHoldsAreCounted) {
  MountA();
  ASSERT_TRUE(Put("stored", kObject).ok());
  PutConfig hard;
  hard.hard_pin = true;
  ASSERT_TRUE(Put("pinned", kObject, hard).ok());
  ASSERT_TRUE(master().PutStart("pending", kObject, {}).ok());
  EXPECT_EQ(*End({"stored", "missing", "pending", "pinned", "stored"}), 2u)
      << "the repeat counts again; the absent, pending and hard-pinned do not";
  EXPECT_EQ(*End({}), 0u);
  EXPECT_TRUE(*master().Exists("stored")) << "a hint removes nothing";
}

TEST_F(MasterSessionTest, AnInvalidKeyRefusesTheWholeCall) {
  MountA();
  for (const std::string& k : {"a", "b"}) ASSERT_TRUE(Put(k, kObject).ok());
  const size_t records = log_.Decoded().size();
  EXPECT_EQ(End({"b", std::string(config_.max_key_length + 1, 'x')}).status().code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(End({"b", ""}).status().code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(log_.Decoded().size(), records) << "nothing logged";
  EXPECT_EQ(EvictOne(master(), {"a", "b"}), Names{"a"}) << "nothing marked";
}

TEST_F(MasterSessionTest, ATenantsHintMarksItsOwnKeys) {
  MountA();
  const std::string prefix = TenantPrefix("t1");
  for (const std::string& k : {"a", "b"}) ASSERT_TRUE(Put(prefix + k, kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());  // the default namespace's b
  ASSERT_EQ(*master().EndSession(Names{"b", "none"}, prefix), 1u);
  EXPECT_EQ(EvictOne(master(), {prefix + "a", prefix + "b", "b"}), Names{prefix + "b"});
}

TEST_F(MasterSessionTest, EachMarkIsLoggedAndARestoreMarksItAgain) {
  MountA();
  for (const std::string& k : {"a", "b", "c", "d"}) ASSERT_TRUE(Put(k, kObject).ok());
  ASSERT_EQ(*End({"c", "missing"}), 1u);
  EXPECT_EQ(log_.waited, log_.Decoded().size()) << "the call waited for its record";
  // d is put again after its hint: the new object was never marked.
  ASSERT_EQ(*End({"d"}), 1u);
  ASSERT_TRUE(master().Remove("d").ok());
  ASSERT_TRUE(Put("d", kObject).ok());
  const std::vector<LogRecord> records = log_.Decoded();
  size_t hints = 0;
  for (const LogRecord& r : records) {
    if (r.type != LogRecordType::kSessionEnded) continue;
    ++hints;
    EXPECT_TRUE(r.key == "c" || r.key == "d") << r.key;
  }
  EXPECT_EQ(hints, 2u) << "one record per object marked, none for a missing key";

  // A restarted master replays the log.
  MemoryLog log2;
  auto m = MasterService::Create(config_, clock_, &log2);
  ASSERT_TRUE(m.ok());
  for (const LogRecord& r : records) (*m)->ApplyRestored(r);
  (*m)->FinishRestore(5'000);
  PreviousMount prev{"a:1#e1", 11};
  ASSERT_TRUE((*m)->MountSegment(Spec("a:1#e2", 33), &prev).ok());
  const Names keys{"a", "b", "c", "d"};
  EXPECT_EQ(EvictOne(**m, keys), Names{"c"}) << "not a, the oldest";
  EXPECT_EQ(EvictOne(**m, keys), (Names{"a", "c"})) << "d's mark went with the object it named";
}

// With a real policy (lru): the replay's pattern. A request reads its stored
// pages (leased) and its session ends; puts then meet those marks leased and
// evict other pages. The next request's pages, put and hinted, are not
// leased: the put after that takes one of them, not an unhinted page, though
// more leased marks than one eviction asks (8) are still waiting.
TEST_F(MasterSessionTest, ALaterHintsUnleasedPagesGoBeforeTheLeasedMarks) {
  config_.make_policy = nullptr;
  config_.eviction_policy = "lru";
  MountA();
  const Names old = Keys("o", kSegBytes / kObject);
  for (const std::string& k : old) ASSERT_TRUE(Put(k, kObject).ok());
  const Names read(old.begin(), old.begin() + 10);  // o0..o9, leased from here
  for (const std::string& k : read) ASSERT_TRUE(master().GetReplicaList(k).ok());
  ASSERT_EQ(*End(Names(read.rbegin(), read.rend())), 10u);
  // Two puts: each spares leased marks, then takes the oldest unread page.
  ASSERT_TRUE(Put("n0", kObject).ok());
  ASSERT_TRUE(Put("n1", kObject).ok());
  EXPECT_FALSE(*master().Exists(old[10]));
  EXPECT_FALSE(*master().Exists(old[11]));
  ASSERT_EQ(*End({"n1", "n0"}), 2u);
  ASSERT_TRUE(Put("n2", kObject).ok());
  EXPECT_FALSE(*master().Exists("n1")) << "the later hint's first mark";
  EXPECT_TRUE(*master().Exists(old[12])) << "not the oldest unread page";
  for (const std::string& k : read) EXPECT_TRUE(*master().Exists(k)) << k << " is leased";
}

}  // namespace
}  // namespace crescent::master
