// The operation log in etcd (src/durability/etcd_log.h, etcd_log_tail.h)
// against a real etcd member: records read back byte-identical, concurrent
// appenders share transactions, a batch above etcd's request limit is split,
// a deposed leader's log fails and writes nothing after the new leader's (and
// its engine undoes the put), trims, reopening, and a standby's tail through
// new records, a compaction and a trimmed position.
#include "durability/etcd_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "durability/etcd_log_tail.h"
#include "etcd/cluster_keys.h"
#include "integration/etcd_cluster.h"
#include "master/master_service.h"

namespace crescent::itest {
namespace {

using durability::EtcdLogOptions;
using durability::EtcdLogTail;
using durability::EtcdOperationLog;
using etcd::Leadership;
using namespace std::chrono_literals;

constexpr char kCluster[] = "t";

struct Record {
  uint64_t position;
  std::string bytes;
  bool operator==(const Record&) const = default;
};
void PrintTo(const Record& r, std::ostream* os) {
  *os << "{" << r.position << ", \"" << r.bytes.substr(0, r.bytes.find('-', r.bytes.find('-') + 1))
      << "...\" (" << r.bytes.size() << " bytes)}";
}

// Holds back the first try of the first batch sent after Arm() until
// Release() (the log's before_txn): the batches cut after it are sent
// meanwhile, so they reach etcd before it.
class Holdback {
 public:
  void Arm() {
    std::lock_guard lock(mu_);
    armed_ = true;
  }
  void BeforeTxn(uint64_t position) {
    std::unique_lock lock(mu_);
    if (!armed_ || held_.has_value()) return;
    held_ = position;
    cv_.notify_all();
    cv_.wait_for(lock, 60s, [&] { return released_; });
  }
  // The position of the batch held back; nullopt when none came in time.
  std::optional<uint64_t> WaitHeld() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 30s, [&] { return held_.has_value(); });
    return held_;
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, released_ = false;
  std::optional<uint64_t> held_;
};

// Waits until `log` counted a batch sent again for arriving before its
// predecessor; false when none did within a generous deadline.
bool SawReorder(EtcdOperationLog& log) {
  for (int i = 0; i < 400 && log.Stats().reordered == 0; ++i) std::this_thread::sleep_for(25ms);
  return log.Stats().reordered > 0;
}

class EtcdLogTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(etcd_.Start(members_, dir_.path(), &why)) << why;
  }
  // A client of every member, starting with member `first`.
  std::shared_ptr<etcd::EtcdClient> Client(size_t first = 0) {
    std::vector<std::string> endpoints;
    for (size_t i = 0; i < etcd_.size(); ++i) {
      endpoints.push_back(etcd_.endpoint((first + i) % etcd_.size()));
    }
    auto c = etcd::EtcdClient::Create({endpoints, 500ms});
    EXPECT_TRUE(c.ok());
    return std::shared_ptr<etcd::EtcdClient>(std::move(c.value()));
  }
  std::shared_ptr<Leadership> Campaign(const std::string& who, size_t first = 0) {
    auto l = Leadership::Campaign(Client(first), {etcd::LeaderKey(kCluster), who, 2000ms},
                                  etcd::Clock::now() + 30s);
    EXPECT_TRUE(l.ok()) << who << ": " << l.status().ToString();
    return l.ok() ? std::shared_ptr<Leadership>(std::move(l.value())) : nullptr;
  }
  std::unique_ptr<EtcdOperationLog> Open(std::shared_ptr<Leadership> leader,
                                         uint64_t batch_bytes = 1 << 20, size_t first = 0,
                                         const std::function<void(EtcdLogOptions&)>& tune = {}) {
    EtcdLogOptions o;
    o.etcd = Client(first);
    o.leadership = std::move(leader);
    o.cluster = kCluster;
    o.batch_bytes = batch_bytes;
    o.page_keys = 3;  // several pages in every test that reads a few batches
    if (tune) tune(o);
    auto log = EtcdOperationLog::Open(std::move(o));
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log.value()) : nullptr;
  }
  static std::vector<Record> ReadAll(master::OperationLog& log, uint64_t from,
                                     Status* s = nullptr) {
    std::vector<Record> out;
    Status got = log.ReadFrom(from, [&](uint64_t p, std::string_view r) {
      out.push_back({p, std::string(r)});
      return Status::Ok();
    });
    if (s != nullptr) *s = got;
    EXPECT_TRUE(s != nullptr || got.ok()) << got.ToString();
    return out;
  }
  // Appends `records` and waits for the last; their records with positions.
  static std::vector<Record> AppendAll(EtcdOperationLog& log, const std::vector<std::string>& in) {
    std::vector<Record> out;
    uint64_t at = log.end_position();
    for (const std::string& r : in) {
      auto end = log.Append(r);
      EXPECT_TRUE(end.ok()) << end.status().ToString();
      out.push_back({at, r});
      at = *end;
    }
    EXPECT_TRUE(log.WaitDurable(at).ok());
    return out;
  }
  // The log's keys in etcd and their values.
  std::vector<std::pair<std::string, std::string>> Keys() {
    etcdserverpb::RangeRequest r;
    r.set_key(etcd::LogPrefix(kCluster));
    r.set_range_end(etcd::PrefixEnd(etcd::LogPrefix(kCluster)));
    auto got = Client()->Range(r);
    EXPECT_TRUE(got.ok());
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : got->kvs()) out.emplace_back(kv.key(), kv.value());
    return out;
  }
  static std::vector<std::string> Numbered(const std::string& tag, int n, size_t size = 40) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) {
      std::string r = tag + "-" + std::to_string(i) + "-";
      while (r.size() < size) r.push_back(static_cast<char>((r.size() * 37 + i) & 0xff));
      out.push_back(std::move(r));
    }
    return out;
  }
  // `threads` threads each append `each` records (Numbered "tN") and wait
  // for each; how many appends or waits failed.
  static int AppendFromThreads(EtcdOperationLog& log, int threads, int each) {
    std::vector<std::thread> running;
    std::atomic<int> failed{0};
    for (int t = 0; t < threads; ++t) {
      running.emplace_back([&, t] {
        for (const std::string& r : Numbered("t" + std::to_string(t), each)) {
          auto end = log.Append(r);
          if (!end.ok() || !log.WaitDurable(*end).ok()) ++failed;
        }
      });
    }
    for (auto& t : running) t.join();
    return failed.load();
  }

  int members_ = 1;
  TempDir dir_;
  EtcdCluster etcd_;
};

class EtcdLogThreeMembersTest : public EtcdLogTest {
 protected:
  EtcdLogThreeMembersTest() { members_ = 3; }
  // The members that lead etcd's raft and one that follows.
  void RaftRoles(size_t* leader, size_t* follower) {
    for (size_t i = 0; i < etcd_.size(); ++i) {
      auto c = etcd::EtcdClient::Create({{etcd_.endpoint(i)}, 2s});
      ASSERT_TRUE(c.ok());
      auto s = (*c)->MemberStatus();
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      (s->leader() == s->header().member_id() ? *leader : *follower) = i;
    }
  }
};

TEST_F(EtcdLogTest, RecordsReadBackByteIdenticalFromAnyPosition) {
  auto log = Open(Campaign("a"));
  ASSERT_NE(log, nullptr);
  std::vector<std::string> in = Numbered("r", 50);
  in.push_back(std::string("\0\xff\x01 binary", 10));
  in.push_back(std::string());
  const std::vector<Record> want = AppendAll(*log, in);
  EXPECT_EQ(log->synced_position(), log->end_position());
  EXPECT_EQ(ReadAll(*log, 0), want);
  const std::vector<Record> tail(want.begin() + 20, want.end());
  EXPECT_EQ(ReadAll(*log, want[20].position), tail);
  EXPECT_TRUE(ReadAll(*log, log->end_position()).empty());
}

TEST_F(EtcdLogTest, ConcurrentAppendersAreGroupCommitted) {
  auto log = Open(Campaign("a"));
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 32, kEach = 40;
  EXPECT_EQ(AppendFromThreads(*log, kThreads, kEach), 0);
  const durability::EtcdLogStats stats = log->Stats();
  EXPECT_EQ(stats.records, uint64_t{kThreads * kEach});
  EXPECT_LT(stats.txns, stats.records) << "each record in a transaction of its own";
  // Every thread's records, each once and in its own order.
  std::vector<std::vector<std::string>> seen(kThreads);
  for (const Record& r : ReadAll(*log, 0)) {
    seen[std::stoi(r.bytes.substr(1, r.bytes.find('-') - 1))].push_back(r.bytes);
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t], Numbered("t" + std::to_string(t), kEach));
}

// 4 MiB appended while etcd is stalled: the committer then holds far more
// than one request may carry, and writes it as batches of at most 1 MiB.
TEST_F(EtcdLogTest, ABatchAboveTheRequestLimitIsSplit) {
  auto log = Open(Campaign("a"));
  ASSERT_NE(log, nullptr);
  etcd_.Freeze(0);
  uint64_t end = 0;
  std::vector<std::string> in = Numbered("big", 40, 100 << 10);
  for (const std::string& r : in) end = *log->Append(r);
  std::this_thread::sleep_for(300ms);
  etcd_.Thaw(0);
  ASSERT_TRUE(log->WaitDurable(end).ok()) << log->error().ToString();
  std::vector<Record> got = ReadAll(*log, 0);
  ASSERT_EQ(got.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i].bytes, in[i]);
  const auto keys = Keys();
  EXPECT_GE(keys.size(), 4u);
  for (const auto& [key, value] : keys) EXPECT_LE(value.size(), 1u << 20) << key;
  EXPECT_LT(log->Stats().txns, in.size());
  // A record that cannot fit in one batch is refused, and the log goes on.
  EXPECT_EQ(log->Append(std::string((1 << 20) + 1, 'x')).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(log->WaitDurable(*log->Append("after")).ok());
}

// The fence: a leader whose lease ran out while it was cut off is refused by
// etcd; its log fails for good, and nothing of it follows the new leader's.
TEST_F(EtcdLogTest, ADeposedLeadersLogFailsAndWritesNothingAfterTheNewOnes) {
  std::shared_ptr<Leadership> a = Campaign("a");
  auto old_log = Open(a);
  ASSERT_NE(old_log, nullptr);
  const std::vector<Record> before = AppendAll(*old_log, Numbered("a", 10));
  a->StopKeepAlive();
  std::shared_ptr<Leadership> b = Campaign("b");  // once a's lease expired
  ASSERT_NE(b, nullptr);
  auto new_log = Open(b);
  ASSERT_NE(new_log, nullptr);
  EXPECT_EQ(new_log->end_position(), old_log->end_position());
  const std::vector<Record> after = AppendAll(*new_log, Numbered("b", 5));

  auto late = old_log->Append("a-late");
  ASSERT_TRUE(late.ok());  // only buffered
  Status s = old_log->WaitDurable(*late);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_THAT(s.message(), testing::HasSubstr("no longer the leader of cluster t"));
  EXPECT_EQ(old_log->Append("a-later").status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(old_log->SyncThrough(0).code(), ErrorCode::kUnavailable);

  std::vector<Record> want = before;
  want.insert(want.end(), after.begin(), after.end());
  EXPECT_EQ(ReadAll(*new_log, 0), want);
}

// An etcd that stops answering is retried while the lease may live; once it
// may not, the log fails as a deposed one does (a standby may lead by then).
TEST_F(EtcdLogTest, AStalledEtcdFailsTheLogOnceTheLeaseMayHaveEnded) {
  std::shared_ptr<Leadership> a = Campaign("a");
  auto log = Open(a);
  ASSERT_NE(log, nullptr);
  AppendAll(*log, Numbered("before", 3));
  etcd_.Freeze(0);
  auto end = log->Append("during");
  ASSERT_TRUE(end.ok());
  // Answers within the TTL and a call's timeout; were it to wait on, the
  // thaw below ends the wait.
  auto waited = std::async(std::launch::async, [&] { return log->WaitDurable(*end); });
  EXPECT_EQ(waited.wait_for(30s), std::future_status::ready) << "still waiting on a stalled etcd";
  etcd_.Thaw(0);
  const Status s = waited.get();
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_THAT(s.message(), testing::HasSubstr("no longer the leader of cluster t"));
  EXPECT_FALSE(a->Held());
  EXPECT_GE(log->Stats().retries, 1u);
  EXPECT_EQ(log->Append("after").status().code(), ErrorCode::kUnavailable);
}

// What the engine does with that: the put whose record a deposed leader could
// not commit is undone and answered with the log's error, not acknowledged.
TEST_F(EtcdLogTest, TheEngineDoesNotAcknowledgeAPutTheDeposedLogRefused) {
  std::shared_ptr<Leadership> a = Campaign("a");
  auto log = Open(a);
  ASSERT_NE(log, nullptr);
  ManualClock clock;
  auto m = master::MasterService::Create(master::MasterConfig(), clock, log.get());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  master::MasterService& master = **m;
  ASSERT_TRUE(master.MountSegment({"seg", 1 << 20, "node", "node:7000", master::Tier::kDram}).ok());
  auto put = [&](const std::string& key) -> Status {
    auto r = master.PutStart(key, 1000, {});
    return r.ok() ? master.PutEnd(key, r->token) : r.status();
  };
  ASSERT_TRUE(put("acked").ok());
  a->StopKeepAlive();
  std::shared_ptr<Leadership> b = Campaign("b");
  ASSERT_NE(b, nullptr);
  Status s = put("after-the-take-over");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), testing::HasSubstr("no longer the leader of cluster t"));
  EXPECT_FALSE(master.GetReplicaList("after-the-take-over").ok());
  // Later ones fail at the append already, and say why as clearly.
  s = put("later");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), testing::HasSubstr("no longer the leader of cluster t"));
}

TEST_F(EtcdLogTest, TruncateDropsWholeBatchesBeforeThePositionAndKeepsTheNewest) {
  auto log = Open(Campaign("a"), /*batch_bytes=*/200);
  ASSERT_NE(log, nullptr);
  std::vector<Record> want;
  for (int i = 0; i < 6; ++i) {  // one wait per round: at least 6 batches
    std::vector<Record> r = AppendAll(*log, Numbered("r" + std::to_string(i), 3));
    want.insert(want.end(), r.begin(), r.end());
  }
  const size_t keys = Keys().size();
  ASSERT_GE(keys, 6u);
  const uint64_t cut = want[8].position;
  ASSERT_TRUE(log->TruncateBefore(cut).ok());
  EXPECT_LT(Keys().size(), keys);
  EXPECT_EQ(ReadAll(*log, cut), std::vector<Record>(want.begin() + 8, want.end()));
  Status s;
  EXPECT_TRUE(ReadAll(*log, 0, &s).empty());
  EXPECT_EQ(s.code(), ErrorCode::kObjectNotFound) << s.ToString();
  EXPECT_THAT(s.message(), testing::HasSubstr("trimmed"));
  // Past everything: the newest batch stays, so that a reopen finds the end.
  ASSERT_TRUE(log->TruncateBefore(log->end_position()).ok());
  EXPECT_EQ(Keys().size(), 1u);
}

TEST_F(EtcdLogTest, ReopeningContinuesAtTheEnd) {
  std::shared_ptr<Leadership> a = Campaign("a");
  std::vector<Record> want;
  uint64_t end = 0;
  {
    auto log = Open(a, 200);
    ASSERT_NE(log, nullptr);
    want = AppendAll(*log, Numbered("first", 12));
    ASSERT_TRUE(log->Append("unwaited").ok());  // the destructor commits it
    end = log->end_position();
  }
  want.push_back(
      {want.back().position + durability::kFrameBytes + want.back().bytes.size(), "unwaited"});
  auto log = Open(a, 200);
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->end_position(), end);
  EXPECT_EQ(log->synced_position(), end);
  const std::vector<Record> more = AppendAll(*log, Numbered("second", 4));
  EXPECT_EQ(more.front().position, end);
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_EQ(ReadAll(*log, 0), want);
}

// A standby's tail: what was there, then what comes; a compaction of the
// revision it was to watch from makes it range again, losing nothing; a trim
// it has passed is ignored.
TEST_F(EtcdLogTest, TheTailHandsNewRecordsInOrderThroughACompactionAndATrim) {
  auto log = Open(Campaign("a"), 300);
  ASSERT_NE(log, nullptr);
  std::vector<Record> want = AppendAll(*log, Numbered("old", 5));
  std::mutex mu;
  std::vector<Record> got;
  bool compacted = false;
  durability::EtcdLogTailOptions o;
  o.etcd = Client();
  o.cluster = kCluster;
  o.page_keys = 100;  // Start()'s range in one page, at a revision before the compaction
  o.fn = [&](uint64_t p, std::string_view r) {
    std::lock_guard lock(mu);
    got.push_back({p, std::string(r)});
    if (!compacted) {  // within Start()'s range: the watch is to start before what follows
      compacted = true;
      // Two rounds, two revisions at least: compacting at the newest drops
      // the one the watch would start from.
      for (const char* round : {"between", "and"}) {
        std::vector<Record> more = AppendAll(*log, Numbered(round, 5));
        want.insert(want.end(), more.begin(), more.end());
      }
      auto now = Client()->MemberStatus();
      EXPECT_TRUE(now.ok() && Client()->Compact(now->header().revision(), true).ok());
    }
    return Status::Ok();
  };
  auto tail = EtcdLogTail::Start(o);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  std::vector<std::thread> appenders;
  std::mutex want_mu;
  std::vector<Record> later;
  for (int t = 0; t < 4; ++t) {
    appenders.emplace_back([&, t] {
      for (const std::string& r : Numbered("new" + std::to_string(t), 25)) {
        auto end = log->Append(r);
        ASSERT_TRUE(end.ok());
        std::lock_guard lock(want_mu);
        later.push_back({*end - durability::kFrameBytes - r.size(), r});
      }
    });
  }
  for (auto& t : appenders) t.join();
  std::sort(later.begin(), later.end(),
            [](const Record& x, const Record& y) { return x.position < y.position; });
  want.insert(want.end(), later.begin(), later.end());
  ASSERT_TRUE(log->WaitDurable(log->end_position()).ok());
  auto caught_up = [&] {
    for (int i = 0; i < 300 && (*tail)->position() < log->end_position(); ++i) {
      std::this_thread::sleep_for(50ms);
    }
  };
  caught_up();
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(got, ReadAll(*log, 0));
  }
  // A trim the tail has passed is a delete it ignores; it goes on after it.
  ASSERT_TRUE(log->TruncateBefore(want[want.size() / 2].position).ok());
  std::vector<Record> last = AppendAll(*log, Numbered("last", 5));
  want.insert(want.end(), last.begin(), last.end());
  caught_up();
  (*tail)->Stop();
  EXPECT_TRUE((*tail)->status().ok()) << (*tail)->status().ToString();
  EXPECT_GE((*tail)->reranges(), 1u);
  std::lock_guard lock(mu);
  EXPECT_EQ(got, want);
}

TEST_F(EtcdLogTest, ATailOfATrimmedPositionFailsClearly) {
  auto log = Open(Campaign("a"), 200);
  ASSERT_NE(log, nullptr);
  std::vector<Record> want;
  for (int i = 0; i < 4; ++i) {
    std::vector<Record> r = AppendAll(*log, Numbered("r" + std::to_string(i), 3));
    want.insert(want.end(), r.begin(), r.end());
  }
  ASSERT_TRUE(log->TruncateBefore(want[6].position).ok());
  durability::EtcdLogTailOptions o;
  o.etcd = Client();
  o.cluster = kCluster;
  o.fn = [](uint64_t, std::string_view) { return Status::Ok(); };
  auto tail = EtcdLogTail::Start(o);
  ASSERT_FALSE(tail.ok());
  EXPECT_EQ(tail.status().code(), ErrorCode::kObjectNotFound);
  EXPECT_THAT(tail.status().message(), testing::HasSubstr("bootstrap from a snapshot"));
  o.from = want[6].position;  // the first position kept is fine
  auto kept = EtcdLogTail::Start(o);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ((*kept)->position(), log->end_position());
}

// The member a standby's tail watches through dies: the watch breaks, and the
// tail ranges again on another member and goes on, losing nothing.
TEST_F(EtcdLogThreeMembersTest, TheTailGoesOnWhenItsMemberDies) {
  size_t raft_leader = 0, follower = 0;
  ASSERT_NO_FATAL_FAILURE(RaftRoles(&raft_leader, &follower));
  ASSERT_NE(raft_leader, follower);
  auto log = Open(Campaign("a", raft_leader), 300, raft_leader);
  ASSERT_NE(log, nullptr);
  AppendAll(*log, Numbered("before", 10));
  std::mutex mu;
  std::vector<Record> got;
  durability::EtcdLogTailOptions o;
  o.etcd = Client(follower);
  o.cluster = kCluster;
  o.fn = [&](uint64_t p, std::string_view r) {
    std::lock_guard lock(mu);
    got.push_back({p, std::string(r)});
    return Status::Ok();
  };
  auto tail = EtcdLogTail::Start(o);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  AppendAll(*log, Numbered("watched", 10));
  etcd_.Kill(follower);
  for (int round = 0; round < 5; ++round) AppendAll(*log, Numbered("r" + std::to_string(round), 5));
  for (int i = 0; i < 300 && (*tail)->position() < log->end_position(); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  (*tail)->Stop();
  EXPECT_TRUE((*tail)->status().ok()) << (*tail)->status().ToString();
  EXPECT_GE((*tail)->reranges(), 1u);
  std::lock_guard lock(mu);
  EXPECT_EQ(got, ReadAll(*log, 0));
}

// Several batches in flight: the first is held back, and the ones cut after
// it reach etcd first. Each of those compares that its predecessor's key is
// there, is refused, and is sent again once the predecessor committed: no
// key ever lies beyond a missing one, and nothing past the held batch is
// acknowledged before it.
TEST_F(EtcdLogTest, ABatchThatArrivesBeforeItsPredecessorIsRefusedAndSentAgain) {
  Holdback hold;
  auto log = Open(Campaign("a"), 200, 0, [&](EtcdLogOptions& o) {
    o.max_in_flight = 4;
    o.before_txn = [&](uint64_t p) { hold.BeforeTxn(p); };
  });
  ASSERT_NE(log, nullptr);
  std::vector<Record> want = AppendAll(*log, Numbered("before", 3));
  hold.Arm();
  std::vector<std::string> in = {"held"};
  for (const std::string& r : Numbered("after", 20)) in.push_back(r);
  uint64_t end = log->end_position();
  for (size_t i = 0; i < in.size(); ++i) {
    want.push_back({end, in[i]});
    end = *log->Append(in[i]);
    if (i == 0) {
      ASSERT_TRUE(hold.WaitHeld().has_value());
    }
  }
  const uint64_t held = *hold.WaitHeld();
  EXPECT_TRUE(SawReorder(*log)) << "no batch was sent while the held one was";
  for (const auto& [key, value] : Keys()) {
    EXPECT_LT(*etcd::LogKeyPosition(kCluster, key), held) << key << " committed before " << held;
  }
  EXPECT_LE(log->synced_position(), held);
  hold.Release();
  ASSERT_TRUE(log->WaitDurable(end).ok()) << log->error().ToString();
  EXPECT_EQ(ReadAll(*log, 0), want);
  const durability::EtcdLogStats stats = log->Stats();
  EXPECT_GE(stats.max_in_flight, 2u);
  EXPECT_LE(stats.max_in_flight, 4u);
}

// Appenders from many threads against an etcd that takes a while to answer
// (20 ms a transaction, as one a network away would): batches go out while
// others are under way, never more than max_in_flight, and every record is
// read back once and in its thread's order.
TEST_F(EtcdLogTest, SeveralBatchesAreInFlightAtOnce) {
  auto log = Open(Campaign("a"), 1 << 20, 0, [](EtcdLogOptions& o) {
    o.max_in_flight = 3;
    o.before_txn = [](uint64_t) { std::this_thread::sleep_for(20ms); };
  });
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 16, kEach = 20;
  EXPECT_EQ(AppendFromThreads(*log, kThreads, kEach), 0);
  const durability::EtcdLogStats stats = log->Stats();
  EXPECT_GE(stats.max_in_flight, 2u);
  EXPECT_LE(stats.max_in_flight, 3u);
  EXPECT_EQ(stats.committed_position, stats.end_position);
  std::vector<std::vector<std::string>> seen(kThreads);
  for (const Record& r : ReadAll(*log, 0)) {
    seen[std::stoi(r.bytes.substr(1, r.bytes.find('-') - 1))].push_back(r.bytes);
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t], Numbered("t" + std::to_string(t), kEach));
}

// The fence with batches in flight: the leader is deposed while its first
// batch is held back and later ones wait for it. The held one is refused by
// etcd, the log fails for good, and none of its batches lands among the new
// leader's.
TEST_F(EtcdLogTest, ADeposedLeadersBatchesInFlightAllFail) {
  Holdback hold;
  std::shared_ptr<Leadership> a = Campaign("a");
  auto old_log = Open(a, 200, 0, [&](EtcdLogOptions& o) {
    o.max_in_flight = 4;
    o.before_txn = [&](uint64_t p) { hold.BeforeTxn(p); };
  });
  ASSERT_NE(old_log, nullptr);
  const std::vector<Record> before = AppendAll(*old_log, Numbered("a", 3));
  const uint64_t before_end = old_log->end_position();
  hold.Arm();
  uint64_t late = *old_log->Append("a-held");
  ASSERT_TRUE(hold.WaitHeld().has_value());
  for (const std::string& r : Numbered("a-late", 10)) late = *old_log->Append(r);
  EXPECT_TRUE(SawReorder(*old_log)) << "no batch was sent while the held one was";
  a->StopKeepAlive();
  std::shared_ptr<Leadership> b = Campaign("b");  // once a's lease expired
  ASSERT_NE(b, nullptr);
  auto new_log = Open(b);
  ASSERT_NE(new_log, nullptr);
  const std::vector<Record> after = AppendAll(*new_log, Numbered("b", 5));
  hold.Release();
  const Status s = old_log->WaitDurable(late);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_THAT(s.message(), testing::HasSubstr("no longer the leader of cluster t"));
  EXPECT_EQ(old_log->Append("a-later").status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(old_log->synced_position(), before_end);
  std::vector<Record> want = before;
  want.insert(want.end(), after.begin(), after.end());
  EXPECT_EQ(ReadAll(*new_log, 0), want);
}

// A standby's tail and a reader ranging over and over, while many appenders
// go through a log whose batches overtake one another (every third try is
// held back a little): neither ever meets a gap, and the tail hands exactly
// what the log holds.
TEST_F(EtcdLogTest, ReadersNeverSeeAGapUnderBatchesInFlight) {
  std::atomic<uint64_t> tries{0};
  auto log = Open(Campaign("a"), 300, 0, [&](EtcdLogOptions& o) {
    o.max_in_flight = 8;
    o.before_txn = [&](uint64_t) {
      if (tries.fetch_add(1) % 3 == 0) std::this_thread::sleep_for(5ms);
    };
  });
  ASSERT_NE(log, nullptr);
  std::mutex mu;
  std::vector<Record> got;
  durability::EtcdLogTailOptions o;
  o.etcd = Client();
  o.cluster = kCluster;
  o.fn = [&](uint64_t p, std::string_view r) {
    std::lock_guard lock(mu);
    got.push_back({p, std::string(r)});
    return Status::Ok();
  };
  auto tail = EtcdLogTail::Start(o);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  std::atomic<bool> done{false};
  std::vector<Status> read_errors;
  std::thread reader([&, client = Client()] {
    while (!done.load()) {
      Status s = durability::ReadEtcdLog(
          *client, kCluster, 0, 4, [](uint64_t, std::string_view) { return Status::Ok(); }, nullptr,
          nullptr);
      if (!s.ok()) read_errors.push_back(s);
    }
  });
  std::vector<std::thread> appenders;
  std::atomic<int> failed{0};
  for (int t = 0; t < 8; ++t) {
    appenders.emplace_back([&, t] {
      for (const std::string& r : Numbered("w" + std::to_string(t), 40)) {
        auto end = log->Append(r);
        if (!end.ok() || !log->WaitDurable(*end).ok()) ++failed;
      }
    });
  }
  for (auto& t : appenders) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(failed.load(), 0);
  for (int i = 0; i < 300 && (*tail)->position() < log->end_position(); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  (*tail)->Stop();
  EXPECT_TRUE((*tail)->status().ok()) << (*tail)->status().ToString();
  EXPECT_TRUE(read_errors.empty()) << read_errors.front().ToString();
  EXPECT_GE(log->Stats().reordered, 1u) << "no batch overtook another";
  std::lock_guard lock(mu);
  EXPECT_EQ(got, ReadAll(*log, 0));
}

}  // namespace
}  // namespace crescent::itest
