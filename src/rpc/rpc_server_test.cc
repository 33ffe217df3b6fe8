// End-to-end behaviour of the control plane: MasterClient → MasterServer →
// MasterService over real gRPC on loopback (and a Unix socket).
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "master/scripted_node_for_test.h"
#include "rpc/master.grpc.pb.h"
#include "rpc/rpc_test_util.h"

namespace crescent::rpc::testing {
namespace {

using master::PutConfig;

class RpcServerTest : public RpcTest {
 protected:
  void SetUp() override { Start(); }
};

TEST_F(RpcServerTest, MountListHeartbeatUnmount) {
  auto id = client_->MountSegment(Spec("seg-a"));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_NE(*id, master::kNoSegment);

  auto segs = client_->ListSegments();
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 1u);
  EXPECT_EQ((*segs)[0].id, *id);
  EXPECT_EQ((*segs)[0].spec.name, "seg-a");
  EXPECT_EQ((*segs)[0].spec.owner_node, "node-a");
  EXPECT_EQ((*segs)[0].spec.endpoint, kEndpointA);
  EXPECT_EQ((*segs)[0].spec.capacity, 1u << 20);
  EXPECT_EQ((*segs)[0].spec.owner_token, 0u) << "the owner token is the owner's secret";

  EXPECT_TRUE(client_->Heartbeat("node-a").ok());
  // The same mount again (its answer lost): the same answer; another is refused.
  auto again = client_->MountSegment(Spec("seg-a"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *id);
  master::SegmentSpec other = Spec("seg-a");
  other.owner_token += 1;
  EXPECT_EQ(client_->MountSegment(other).status().code(), ErrorCode::kSegmentAlreadyExists);
  EXPECT_TRUE(client_->UnmountSegment("seg-a", "node-a", kOwnerToken).ok());
  EXPECT_TRUE(client_->ListSegments()->empty());
}

// Only the incarnation that mounted a segment can unmount it: another client
// naming the owner, or an earlier process of the same node stopping late,
// does not know the mount's token.
TEST_F(RpcServerTest, UnmountNeedsTheMountsOwnerToken) {
  ASSERT_TRUE(client_->MountSegment(Spec("seg-a")).ok());
  EXPECT_EQ(client_->UnmountSegment("seg-a", "node-a", 0).code(), ErrorCode::kNotOwner);
  EXPECT_EQ(client_->UnmountSegment("seg-a", "node-a", kOwnerToken + 1).code(),
            ErrorCode::kNotOwner);
  EXPECT_EQ(client_->ListSegments()->size(), 1u);
  EXPECT_TRUE(client_->UnmountSegment("seg-a", "node-a", kOwnerToken).ok());
  master::SegmentSpec tokenless = Spec("seg-b");
  tokenless.owner_token = 0;
  EXPECT_EQ(client_->MountSegment(tokenless).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(RpcServerTest, HeartbeatOfUnknownNodeAsksForRemount) {
  EXPECT_EQ(client_->Heartbeat("nobody").code(), ErrorCode::kNodeUnknown);
  // The reply carries the master's clock all the same: a node measures its
  // own against it before it first mounts (docs/capabilities.md, "Clock skew").
  MasterClient::MasterClockReading clock;
  const int64_t before = UnixNowMs();
  EXPECT_EQ(client_->Heartbeat("nobody", &clock).code(), ErrorCode::kNodeUnknown);
  EXPECT_GE(clock.unix_ms, before);
  EXPECT_LE(clock.unix_ms, UnixNowMs());
  EXPECT_EQ(clock.capability_grace_ms, config_.capability_grace_ms);
  EXPECT_EQ(clock.capability_lifetime_ms, master_->LongestCapabilityMs());
  EXPECT_GE(clock.capability_lifetime_ms, config_.put_timeout_ms);
}

TEST_F(RpcServerTest, PutGetExistsRemove) {
  Mount();
  auto put = client_->PutStart("k", 100, {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  ASSERT_EQ(put->replicas.size(), 1u);
  EXPECT_EQ(put->replicas[0].endpoint, kEndpointA);
  EXPECT_EQ(client_->Exists("k").value(), false);  // not complete yet
  ASSERT_TRUE(client_->PutEnd("k", put->token).ok());

  auto read = client_->GetReplicaList("k");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size, 100u);
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].cap.segment, put->replicas[0].cap.segment);
  EXPECT_EQ(read->replicas[0].cap.offset, put->replicas[0].cap.offset);
  EXPECT_TRUE(client_->Exists("k").value());

  EXPECT_EQ(client_->Remove("k", false).code(), ErrorCode::kObjectLeased);
  EXPECT_TRUE(client_->Remove("k", true).ok());
  EXPECT_FALSE(client_->Exists("k").value());
  EXPECT_EQ(client_->GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);

  auto revoked = client_->PutStart("r", 10, {});
  ASSERT_TRUE(revoked.ok());
  EXPECT_TRUE(client_->PutRevoke("r", revoked->token).ok());
  EXPECT_FALSE(client_->Exists("r").value());
}

TEST_F(RpcServerTest, BatchFormsChainAndPrefixQueries) {
  Mount();
  std::vector<std::string> keys = Keys("page", 5);
  std::vector<uint64_t> sizes(5, 64);
  auto started = client_->BatchPutStart(keys, sizes, {}, /*chain=*/true);
  ASSERT_EQ(started.size(), 5u);
  std::vector<uint64_t> tokens;
  for (const auto& r : started) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    tokens.push_back(r->token);
  }
  for (const Status& s : client_->BatchPutEnd(keys, tokens)) EXPECT_TRUE(s.ok()) << s.ToString();

  auto reads = client_->BatchGetReplicaList(keys, false);
  ASSERT_EQ(reads.size(), 5u);
  for (const auto& r : reads) EXPECT_TRUE(r.ok() && r->size == 64);

  std::vector<std::string> probe = {"page0", "page1", "page2", "missing", "page4"};
  auto exists = client_->BatchExists(probe);
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_EQ(exists->present, (std::vector<bool>{true, true, true, false, true}));
  EXPECT_EQ(exists->leading, 3u);
  EXPECT_EQ(client_->BatchQueryPrefix(probe).value(), 3u);

  // Prefix mode stops at the first unreadable key, with that key's error.
  auto prefix = client_->BatchGetReplicaList(probe, true);
  ASSERT_EQ(prefix.size(), 4u);
  EXPECT_EQ(prefix[3].status().code(), ErrorCode::kObjectNotFound);
  auto all = client_->BatchGetReplicaList(probe, false);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[3].status().code(), ErrorCode::kObjectNotFound);

  bool truncated = false;
  auto listed = client_->List("page", 2, &truncated);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<std::string>{"page0", "page1"}));
  EXPECT_TRUE(truncated);
  EXPECT_EQ(client_->List("page", 0, &truncated)->size(), 5u);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(client_->List("page", 5, &truncated)->size(), 5u);  // exactly the limit: all of it
  EXPECT_FALSE(truncated);

  auto removed = client_->BatchRemove({keys.data(), 2}, /*force=*/true);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_TRUE(removed[0].ok() && removed[1].ok());
  EXPECT_EQ(client_->RemoveByPrefix("page", true).value(), 3u);
  ASSERT_TRUE(Put("x1").ok());
  ASSERT_TRUE(Put("x2").ok());
  EXPECT_EQ(client_->RemoveAll(false).value(), 2u);
  EXPECT_TRUE(client_->List("", 0)->empty());

  for (const Status& s :
       client_->BatchPutRevoke(std::vector<std::string>{"nope"}, std::vector<uint64_t>{0})) {
    EXPECT_EQ(s.code(), ErrorCode::kPutNotStarted);
  }
}

TEST_F(RpcServerTest, EngineErrorsKeepTheirCodes) {
  Mount();
  ASSERT_TRUE(Put("dup").ok());
  EXPECT_EQ(client_->PutStart("dup", 10, {}).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(client_->PutEnd("never-started", 0).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(client_->PutStart("", 10, {}).status().code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(client_->PutStart("big", 1 << 30, {}).status().code(), ErrorCode::kInvalidSize);
}

// The put token crosses the wire both ways: a client whose put was revoked
// (or timed out) cannot end or revoke a later put of the key, one by one or in
// a batch, and a batch must carry a token per key.
TEST_F(RpcServerTest, PutTokensTravelAndStaleOnesAreRefused) {
  Mount();
  auto first = client_->PutStart("k", 10, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(client_->PutRevoke("k", first->token).ok());
  auto second = client_->PutStart("k", 10, {});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_NE(second->token, first->token);

  EXPECT_EQ(client_->PutEnd("k", first->token).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(client_->PutRevoke("k", first->token).code(), ErrorCode::kPutNotStarted);
  const std::vector<std::string> keys = {"k"};
  EXPECT_EQ(client_->BatchPutEnd(keys, std::vector<uint64_t>{first->token})[0].code(),
            ErrorCode::kPutNotStarted);
  // The server refuses a batch without one token per key before the engine.
  for (const std::vector<uint64_t>& tokens :
       {std::vector<uint64_t>{}, std::vector<uint64_t>{second->token, second->token}}) {
    Status s = client_->BatchPutRevoke(keys, tokens)[0];
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.message().find("1 keys but " + std::to_string(tokens.size()) + " put tokens"),
              std::string::npos)
        << s.ToString();
  }
  EXPECT_FALSE(*client_->Exists("k"));

  auto ended = client_->BatchPutEnd(keys, std::vector<uint64_t>{second->token});
  ASSERT_TRUE(ended[0].ok()) << ended[0].ToString();
  EXPECT_TRUE(*client_->Exists("k"));
}

// End-to-end checksums cross the wire both ways, and a corrupt-replica report
// is validated before the engine sees it.
TEST_F(RpcServerTest, ChecksumsTravelAndCorruptReportsAreChecked) {
  Mount();
  auto put = client_->PutStart("k", 100, {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  ASSERT_TRUE(client_->PutEnd("k", put->token, 0x1234567890abcdefULL).ok());
  auto read = client_->GetReplicaList("k");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->checksum, 0x1234567890abcdefULL);

  const std::vector<std::string> keys = {"b0", "b1"};
  const std::vector<uint64_t> sizes = {10, 10};
  auto started = client_->BatchPutStart(keys, sizes, {}, false);
  ASSERT_TRUE(started[0].ok() && started[1].ok());
  const std::vector<uint64_t> tokens = {started[0]->token, started[1]->token};
  std::vector<Status> refused = client_->BatchPutEnd(keys, tokens, std::vector<uint64_t>{5});
  ASSERT_EQ(refused.size(), 2u);
  for (const Status& s : refused) EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  // The first result says why (the others point to it).
  EXPECT_NE(refused[0].message().find("2 keys but 1 checksums"), std::string::npos)
      << refused[0].ToString();
  for (const Status& s : client_->BatchPutEnd(keys, tokens, std::vector<uint64_t>{5, 6})) {
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto both = client_->BatchGetReplicaList(keys, false);
  ASSERT_TRUE(both[0].ok() && both[1].ok());
  EXPECT_EQ(both[0]->checksum, 5u);
  EXPECT_EQ(both[1]->checksum, 6u);

  const transfer::Capability& cap = read->replicas[0].cap;
  EXPECT_EQ(client_->ReportCorruptReplica("", cap.segment, cap.offset, read->checksum).code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(client_->ReportCorruptReplica(std::string(config_.max_key_length + 1, 'k'),
                                          cap.segment, cap.offset, read->checksum)
                .code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(client_->ReportCorruptReplica("k", 0, cap.offset, read->checksum).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(*client_->Exists("k")) << "a refused report changed the engine";
  EXPECT_EQ(client_->ReportCorruptReplica("k", cap.segment, cap.offset, read->checksum + 1).code(),
            ErrorCode::kObjectNotFound);

  // Without a way to have the node check its bytes, nothing is dropped.
  EXPECT_EQ(client_->ReportCorruptReplica("k", cap.segment, cap.offset, read->checksum).code(),
            ErrorCode::kUnavailable);
  EXPECT_TRUE(*client_->Exists("k"));
  // Its node confirms the report at the next maintenance pass.
  master::testing::ScriptedNode node;
  node.corrupt.insert({cap.segment, cap.offset});
  master_->SetReplicaCopier(&node);
  ASSERT_TRUE(client_->ReportCorruptReplica("k", cap.segment, cap.offset, read->checksum).ok());
  master_->RunMaintenance();
  master_->SetReplicaCopier(nullptr);
  EXPECT_FALSE(*client_->Exists("k")) << "its only replica was dropped";
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters["crescent_corrupt_replicas_total"], 1u);
  EXPECT_EQ(stats->counters["crescent_corrupt_objects_total"], 1u);
}

// Put attempts cross the wire: the same request sent twice (a retry after a
// lost reply) gets the same tokens; the server refuses a count that is
// neither zero nor one per key before the engine; and MasterClient names each
// call's puts afresh, so two calls for one key still conflict.
TEST_F(RpcServerTest, PutAttemptsTravelAndARetriedRequestGetsItsGrantBack) {
  Mount();
  auto stub = Master::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                  grpc::InsecureChannelCredentials()));
  auto call = [&](const proto::BatchPutStartRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    proto::BatchPutStartResponse resp;
    grpc::Status st = stub->BatchPutStart(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  };
  proto::BatchPutStartRequest req;
  for (const char* k : {"x", "y"}) req.add_keys(k);
  req.add_sizes(10);
  req.add_sizes(20);
  req.add_attempts(0x1234);
  proto::BatchPutStartResponse short_count = call(req);
  ASSERT_EQ(short_count.results_size(), 2);
  for (const auto& r : short_count.results()) {
    EXPECT_EQ(r.status().code(), static_cast<int>(ErrorCode::kInvalidArgument));
  }
  EXPECT_NE(short_count.results(0).status().message().find("2 keys but 1 put attempts"),
            std::string::npos);
  req.add_attempts(0x5678);
  proto::BatchPutStartResponse first = call(req), again = call(req);
  ASSERT_EQ(first.results_size(), 2);
  ASSERT_EQ(again.results_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(first.results(i).status().code(), 0) << first.results(i).status().message();
    EXPECT_EQ(again.results(i).status().code(), 0) << again.results(i).status().message();
    EXPECT_EQ(again.results(i).token(), first.results(i).token());
  }
  proto::PutStartRequest one;
  one.set_key("z");
  one.set_size(5);
  one.set_attempt(99);
  uint64_t tokens[2];
  for (uint64_t& token : tokens) {
    grpc::ClientContext ctx;
    proto::PutStartResponse resp;
    ASSERT_TRUE(stub->PutStart(&ctx, one, &resp).ok());
    ASSERT_EQ(resp.status().code(), 0) << resp.status().message();
    token = resp.token();
  }
  EXPECT_EQ(tokens[0], tokens[1]);

  ASSERT_TRUE(client_->PutStart("w", 5, {}).ok());
  EXPECT_EQ(client_->PutStart("w", 5, {}).status().code(), ErrorCode::kObjectAlreadyExists);
  const std::vector<std::string> v = {"v"};
  ASSERT_TRUE(client_->BatchPutStart(v, std::vector<uint64_t>{5}, {}, false)[0].ok());
  EXPECT_EQ(client_->BatchPutStart(v, std::vector<uint64_t>{5}, {}, false)[0].status().code(),
            ErrorCode::kObjectAlreadyExists);
}

TEST_F(RpcServerTest, ListSaysWhenTheServersCapCutItShort) {
  MasterServerOptions options = DefaultServerOptions();
  options.max_list = 3;
  Start(options);
  Mount();
  for (const std::string& k : Keys("n", 4)) ASSERT_TRUE(Put(k).ok());
  bool truncated = false;
  // 0 and a limit above the cap both get the cap, and say that more are stored.
  for (size_t limit : {size_t{0}, size_t{10}}) {
    auto listed = client_->List("n", limit, &truncated);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    EXPECT_EQ(*listed, (std::vector<std::string>{"n0", "n1", "n2"})) << limit;
    EXPECT_TRUE(truncated) << limit;
  }
  ASSERT_TRUE(client_->Remove("n3", true).ok());
  EXPECT_EQ(client_->List("n", 0, &truncated)->size(), 3u);
  EXPECT_FALSE(truncated);
}

// Replies that grow with what is stored or asked stay under the gRPC message
// limit (64 KiB here): List cuts its reply to fit and says so; a batch whose
// reply could exceed it is refused before the engine starts anything.
class RpcReplyLimitTest : public RpcServerTest {
 protected:
  static constexpr int kMessageBytes = 64 << 10;
  void SetUp() override {
    MasterServerOptions options = DefaultServerOptions();
    options.max_message_bytes = kMessageBytes;
    Start(options);
    Mount();
  }

  // Puts `keys` (64 bytes each) in batches of `batch`, small enough to fit.
  void PutInBatches(const std::vector<std::string>& keys, size_t batch) {
    for (size_t i = 0; i < keys.size(); i += batch) {
      std::vector<std::string> part(keys.begin() + i,
                                    keys.begin() + std::min(keys.size(), i + batch));
      std::vector<uint64_t> tokens;
      for (const auto& r :
           client_->BatchPutStart(part, std::vector<uint64_t>(part.size(), 64), {}, false)) {
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        tokens.push_back(r->token);
      }
      for (const Status& s : client_->BatchPutEnd(part, tokens))
        ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
};

TEST_F(RpcReplyLimitTest, ListCutsALongReplyToTheMessageLimit) {
  // 200 keys of 1000 bytes: 200 KB of keys, more than one reply may carry.
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) {
    std::string k = "long/" + std::to_string(1000 + i);
    keys.push_back(k + std::string(1000 - k.size(), 'x'));
  }
  PutInBatches(keys, 20);
  bool truncated = false;
  auto listed = client_->List("long/", 0, &truncated);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_TRUE(truncated);
  ASSERT_GT(listed->size(), 30u);
  ASSERT_LT(listed->size(), 66u);
  // The first keys in key order, none skipped.
  EXPECT_TRUE(std::equal(listed->begin(), listed->end(), keys.begin()));
}

// Pages chained by their last key (ListRequest.after) list every key once,
// however many replies that takes.
TEST_F(RpcReplyLimitTest, ListPagesThroughEveryKeyAfterTheLastOne) {
  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) {
    std::string k = "long/" + std::to_string(1000 + i);
    keys.push_back(k + std::string(1000 - k.size(), 'x'));
  }
  PutInBatches(keys, 20);
  std::vector<std::string> listed;
  bool truncated = true;
  int pages = 0;
  while (truncated) {
    auto page = client_->List("long/", 0, &truncated, listed.empty() ? "" : listed.back());
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_FALSE(page->empty());
    listed.insert(listed.end(), page->begin(), page->end());
    ASSERT_LT(++pages, 20);
  }
  EXPECT_GT(pages, 2);
  EXPECT_EQ(listed, keys);
  // A cursor is a key: one longer than the key limit is refused.
  auto bad = client_->List("long/", 0, nullptr, std::string(1025, 'k'));
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidKey);
}

TEST_F(RpcReplyLimitTest, BatchPutStartWhoseReplyCouldNotFitStartsNothing) {
  // Each started put answers with a write capability (~150 bytes with its
  // endpoint): 1000 of them do not fit in 64 KiB.
  std::vector<std::string> keys = Keys("p", 1000);
  auto results = client_->BatchPutStart(keys, std::vector<uint64_t>(keys.size(), 64), {}, false);
  ASSERT_EQ(results.size(), keys.size());
  for (const auto& r : results) {
    ASSERT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().ToString();
  }
  EXPECT_NE(results[0].status().message().find("message limit"), std::string::npos)
      << results[0].status().message();
  EXPECT_EQ(master_->Stats().pending_puts, 0u) << "nothing was started";
  EXPECT_EQ(master_->Stats().used_bytes, 0u) << "nothing was allocated";
  // A batch that fits still goes.
  std::vector<std::string> few = Keys("p", 100);
  for (const auto& r :
       client_->BatchPutStart(few, std::vector<uint64_t>(few.size(), 64), {}, false))
    EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST_F(RpcReplyLimitTest, BatchGetReplicaListWhoseReplyCouldNotFitIsRefused) {
  std::vector<std::string> keys = Keys("g", 1000);
  PutInBatches(keys, 100);
  auto reads = client_->BatchGetReplicaList(keys, false);
  ASSERT_EQ(reads.size(), keys.size());
  for (const auto& r : reads) {
    ASSERT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().ToString();
  }
  EXPECT_NE(reads[0].status().message().find("message limit"), std::string::npos)
      << reads[0].status().message();
  EXPECT_TRUE(client_->BatchGetReplicaList(Keys("g", 100), false)[99].ok());
}

// One bad key (empty, or over the key limit) gets its own INVALID_KEY in every
// batch RPC, and the other keys their answers: the server used to refuse a
// whole batch for one over-long key. Only what concerns the whole batch (the
// count, the reply size) refuses it whole.
TEST_F(RpcServerTest, OneBadKeyNeverSpoilsABatch) {
  Mount();
  ASSERT_TRUE(Put("a").ok());
  ASSERT_TRUE(Put("b").ok());
  const std::string too_long(config_.max_key_length + 1, 'x');
  for (const std::string& bad : {std::string(), too_long}) {
    SCOPED_TRACE(bad.empty() ? "empty key" : "key over the limit");
    std::vector<std::string> keys = {"a", bad, "b"};
    auto exists = client_->BatchExists(keys);
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    EXPECT_EQ(exists->present, (std::vector<bool>{true, false, true}));
    EXPECT_EQ(exists->leading, 1u);
    ASSERT_EQ(exists->statuses.size(), 3u);
    EXPECT_EQ(exists->statuses[1].code(), ErrorCode::kInvalidKey);
    EXPECT_TRUE(exists->statuses[2].ok());

    EXPECT_EQ(client_->BatchQueryPrefix(keys).value(), 1u);  // the bad key ends the prefix
    std::vector<std::string> bad_first = {bad, "a"};
    EXPECT_EQ(client_->BatchQueryPrefix(bad_first).status().code(), ErrorCode::kInvalidKey);

    auto reads = client_->BatchGetReplicaList(keys, false);
    ASSERT_EQ(reads.size(), 3u);
    EXPECT_TRUE(reads[0].ok() && reads[2].ok());
    EXPECT_EQ(reads[1].status().code(), ErrorCode::kInvalidKey);
    auto prefix = client_->BatchGetReplicaList(keys, true);
    ASSERT_EQ(prefix.size(), 2u);
    EXPECT_EQ(prefix[1].status().code(), ErrorCode::kInvalidKey);

    std::vector<std::string> fresh = {"c", bad, "d"};
    auto started = client_->BatchPutStart(fresh, std::vector<uint64_t>(3, 64), {}, true);
    ASSERT_EQ(started.size(), 3u);
    ASSERT_TRUE(started[0].ok()) << started[0].status().ToString();
    EXPECT_EQ(started[1].status().code(), ErrorCode::kInvalidKey);
    ASSERT_TRUE(started[2].ok()) << started[2].status().ToString();
    std::vector<std::string> end_keys = {"c", bad, "d"};
    std::vector<uint64_t> tokens = {started[0]->token, 1, started[2]->token};
    auto ended = client_->BatchPutEnd(end_keys, tokens);
    EXPECT_TRUE(ended[0].ok() && ended[2].ok());
    EXPECT_EQ(ended[1].code(), ErrorCode::kInvalidKey);

    auto removed = client_->BatchRemove(end_keys, false);
    EXPECT_TRUE(removed[0].ok() && removed[2].ok());
    EXPECT_EQ(removed[1].code(), ErrorCode::kInvalidKey);
  }
}

// A batch over more keys than a request may carry is split by the client into
// requests of at most max_batch_keys: every key is answered, and a prefix
// query stops at the first part that is not all present. Batches over 65,536
// keys used to fail with -1 for every key (the master's limit).
TEST_F(RpcServerTest, BatchesOverTheRequestLimitAreSplit) {
  MasterServerOptions options = DefaultServerOptions();
  options.max_batch = 4;
  MasterClientOptions client_options;
  client_options.max_batch_keys = 4;
  Start(options, client_options);
  Mount();

  std::vector<std::string> keys = Keys("s", 10);
  auto started = client_->BatchPutStart(keys, std::vector<uint64_t>(10, 64), {}, /*chain=*/true);
  ASSERT_EQ(started.size(), 10u);
  std::vector<uint64_t> tokens;
  for (const auto& r : started) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    tokens.push_back(r->token);
  }
  for (const Status& s : client_->BatchPutEnd(keys, tokens)) ASSERT_TRUE(s.ok()) << s.ToString();

  EXPECT_EQ(client_->BatchQueryPrefix(keys).value(), 10u);
  auto exists = client_->BatchExists(keys);
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_EQ(exists->present, std::vector<bool>(10, true));
  EXPECT_EQ(exists->leading, 10u);
  EXPECT_TRUE(exists->statuses.empty());
  auto reads = client_->BatchGetReplicaList(keys, false);
  ASSERT_EQ(reads.size(), 10u);
  for (const auto& r : reads) EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(client_->BatchGetReplicaList(keys, true).size(), 10u);

  // A miss in the second part ends the prefix there; the answers before it
  // and the per-key answers after it are kept.
  std::vector<std::string> holed = keys;
  holed[6] = "missing";
  EXPECT_EQ(client_->BatchQueryPrefix(holed).value(), 6u);
  exists = client_->BatchExists(holed);
  ASSERT_TRUE(exists.ok());
  EXPECT_EQ(exists->leading, 6u);
  EXPECT_FALSE(exists->present[6]);
  EXPECT_TRUE(exists->present[9]);
  auto prefix = client_->BatchGetReplicaList(holed, true);
  ASSERT_EQ(prefix.size(), 7u);
  EXPECT_EQ(prefix[6].status().code(), ErrorCode::kObjectNotFound);

  // A bad key first in a later part ends the prefix; its refusal lands in its slot.
  std::vector<std::string> bad = keys;
  bad[4] = "";
  EXPECT_EQ(client_->BatchQueryPrefix(bad).value(), 4u);
  exists = client_->BatchExists(bad);
  ASSERT_TRUE(exists.ok());
  ASSERT_EQ(exists->statuses.size(), 10u);
  EXPECT_EQ(exists->statuses[4].code(), ErrorCode::kInvalidKey);
  EXPECT_TRUE(exists->statuses[9].ok());
  EXPECT_TRUE(exists->present[9]);

  for (const Status& s : client_->BatchRemove(keys, true)) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(client_->BatchQueryPrefix(keys).value(), 0u);

  // A client whose requests are larger than the master accepts gets the
  // master's refusal, naming its limit; it never reads as a result.
  client_options.max_batch_keys = 8;
  Start(options, client_options);
  auto refused = client_->BatchQueryPrefix(keys);
  ASSERT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("limit of 4"), std::string::npos)
      << refused.status().message();
}

TEST_F(RpcServerTest, ValidationRefusesBeforeTheEngine) {
  MasterServerOptions options = DefaultServerOptions();
  options.max_batch = 4;
  Start(options);
  Mount();

  std::vector<std::string> keys = Keys("k", 3);
  std::vector<uint64_t> two_sizes = {1, 2};
  auto refused = client_->BatchPutStart(keys, two_sizes, {}, false);
  ASSERT_EQ(refused.size(), keys.size());
  EXPECT_NE(refused[0].status().message().find("3 keys but 2 sizes"), std::string::npos);
  for (const auto& r : refused) EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  std::vector<std::string> five = Keys("k", 5);
  for (const Status& s : client_->BatchPutEnd(five, std::vector<uint64_t>(five.size(), 0)))
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->BatchExists(five).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->BatchQueryPrefix(five).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->BatchGetReplicaList(five, false)[4].status().code(),
            ErrorCode::kInvalidArgument);


  PutConfig pin;
  pin.soft_pin_ttl_ms = -1;
  EXPECT_EQ(client_->PutStart("k", 10, pin).status().code(), ErrorCode::kInvalidArgument);
  PutConfig many;
  many.replica_count = 17;
  EXPECT_EQ(client_->PutStart("k", 10, many).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(client_->Exists("k").value());  // nothing reached the engine

  EXPECT_EQ(client_->MountSegment(Spec("s", "n", "no-port")).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->MountSegment(Spec("", "n")).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->MountSegment(Spec("s", std::string(257, 'n'))).status().code(),
            ErrorCode::kInvalidArgument);
  auto zero = Spec("s");
  zero.capacity = 0;
  EXPECT_EQ(client_->MountSegment(zero).status().code(), ErrorCode::kInvalidArgument);
  auto tier = Spec("s");
  tier.tier = static_cast<master::Tier>(2);
  EXPECT_EQ(client_->MountSegment(tier).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->ListSegments()->size(), 1u);
  EXPECT_EQ(client_->Heartbeat("").code(), ErrorCode::kInvalidArgument);
}

TEST_F(RpcServerTest, CapabilitiesVerifyAgainstTheReplicaEndpoint) {
  Mount();
  auto check = transfer::CapabilitySigner::Create(kSecret);
  ASSERT_TRUE(check.ok());
  const transfer::CapabilitySigner& verifier = *check;

  auto put = client_->PutStart("cap", 256, {});
  ASSERT_TRUE(put.ok());
  const RemoteReplica& w = put->replicas[0];
  int64_t now = UnixNowMs();
  EXPECT_TRUE(verifier.Verify(w.endpoint, w.cap, transfer::AccessOp::kWrite, now).ok());
  EXPECT_FALSE(verifier.Verify(w.endpoint, w.cap, transfer::AccessOp::kRead, now).ok());
  EXPECT_FALSE(verifier.Verify("127.0.0.1:9999", w.cap, transfer::AccessOp::kWrite, now).ok());
  EXPECT_EQ(w.cap.length, 256u);
  EXPECT_NEAR(w.cap.expiry_unix_ms, now + config_.put_timeout_ms, 1000);
  ASSERT_TRUE(client_->PutEnd("cap", put->token).ok());

  auto read = client_->GetReplicaList("cap");
  ASSERT_TRUE(read.ok());
  const RemoteReplica& r = read->replicas[0];
  now = UnixNowMs();
  EXPECT_TRUE(verifier.Verify(r.endpoint, r.cap, transfer::AccessOp::kRead, now).ok());
  EXPECT_FALSE(verifier.Verify(r.endpoint, r.cap, transfer::AccessOp::kWrite, now).ok());
  EXPECT_NEAR(r.cap.expiry_unix_ms, now + config_.lease_ms, 1000);
  EXPECT_EQ(read->lease_expiry_unix_ms, r.cap.expiry_unix_ms);

  // A tampered capability is refused.
  transfer::Capability widened = r.cap;
  widened.length += 1;
  EXPECT_EQ(verifier.Verify(r.endpoint, widened, transfer::AccessOp::kRead, now).code(),
            ErrorCode::kCapabilityInvalid);

  auto batch = client_->BatchGetReplicaList(std::vector<std::string>{"cap"}, false);
  ASSERT_TRUE(batch[0].ok());
  EXPECT_TRUE(verifier
                  .Verify(batch[0]->replicas[0].endpoint, batch[0]->replicas[0].cap,
                          transfer::AccessOp::kRead, UnixNowMs())
                  .ok());
}

TEST_F(RpcServerTest, ListensOnAUnixSocket) {
  std::string path = "/tmp/crescent-rpc-test-" + std::to_string(getpid()) + ".sock";
  MasterServerOptions options = DefaultServerOptions();
  options.unix_socket = path;
  MasterClientOptions client_options;
  client_options.address = "unix:" + path;
  Start(options, client_options);
  Mount();
  ASSERT_TRUE(Put("over-uds").ok());
  EXPECT_TRUE(client_->Exists("over-uds").value());
  client_.reset();
  server_.reset();

  // A socket file left by a dead process is replaced, not an obstacle.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  close(fd);  // the file stays behind, as after a crash
  Start(options, client_options);
  EXPECT_TRUE(client_->Exists("over-uds").value());
}

TEST_F(RpcServerTest, BusyPortIsAnError) {
  MasterServerOptions options = DefaultServerOptions();
  options.listen_address = "127.0.0.1:" + std::to_string(server_->port());
  auto second = MasterServer::Start(options, *master_, *signer_);
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(second.status().message().find(options.listen_address), std::string::npos);
  // ...and says why (gRPC itself would only have logged it).
  EXPECT_NE(second.status().message().find("Address already in use"), std::string::npos)
      << second.status().ToString();
}

TEST_F(RpcServerTest, UnreachableMasterReturnsUnavailableNamingTheAddress) {
  int port = server_->port();
  client_.reset();
  server_->Shutdown();
  MasterClientOptions options;
  options.address = "127.0.0.1:" + std::to_string(port);
  options.attempts = 3;
  options.backoff_initial_ms = 10;
  options.backoff_max_ms = 20;
  options.rpc_timeout_ms = 2000;
  auto client = MasterClient::Create(options);
  ASSERT_TRUE(client.ok());
  Status s = (*client)->Exists("k").status();
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(options.address), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("3 attempts"), std::string::npos) << s.message();
  // A heartbeat tries once: the node's loop asks again soon on its own.
  Status beat = (*client)->Heartbeat("node-a");
  EXPECT_EQ(beat.code(), ErrorCode::kUnavailable) << beat.ToString();
  EXPECT_NE(beat.message().find("after 1 attempt:"), std::string::npos) << beat.message();
  auto batch = (*client)->BatchPutEnd(Keys("k", 2), std::vector<uint64_t>(2, 0));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1].code(), ErrorCode::kUnavailable);
}

TEST_F(RpcServerTest, StatsCarriesEngineFiguresAndCounters) {
  Mount();
  ASSERT_TRUE(Put("a").ok());
  ASSERT_TRUE(Put("b").ok());
  ASSERT_TRUE(client_->PutStart("pending", 10, {}).ok());
  auto stats = client_->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->objects, 2u);
  EXPECT_EQ(stats->pending_puts, 1u);
  EXPECT_EQ(stats->capacity_bytes, 1u << 20);
  EXPECT_GT(stats->used_bytes, 0u);
  ASSERT_EQ(stats->segments.size(), 1u);
  EXPECT_EQ(stats->segments[0].spec.name, "seg-a");
  EXPECT_EQ(stats->counters.at("crescent_requests_total{op=\"put_start\"}"), 3u);
  EXPECT_EQ(stats->counters.at("crescent_objects"), 2u);
}

TEST_F(RpcServerTest, ConcurrentClientsOnFourServerThreads) {
  MasterServerOptions options = DefaultServerOptions();
  options.threads = 4;
  Start(options);
  Mount();
  constexpr int kThreads = 4, kKeys = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        // Built by appending: GCC 12 warns falsely (-Wrestrict) on "t" + to_string().
        std::string key = "t";
        key += std::to_string(t);
        key += '-';
        key += std::to_string(i);
        uint64_t size = 64 + i;
        auto put = client_->PutStart(key, size, {});
        if (!put.ok() || !client_->PutEnd(key, put->token).ok()) {
          ++failures;
          continue;
        }
        auto read = client_->GetReplicaList(key);
        if (!read.ok() || read->size != size) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(client_->List("t", 0)->size(), size_t{kThreads * kKeys});
}

TEST(ResolveMasterAddressTest, ConfiguredThenEnvironmentThenDefault) {
  unsetenv("CRESCENT_MASTER");
  EXPECT_EQ(ResolveMasterAddress(""), "127.0.0.1:50051");
  setenv("CRESCENT_MASTER", "10.0.0.1:6000", 1);
  EXPECT_EQ(ResolveMasterAddress(""), "10.0.0.1:6000");
  EXPECT_EQ(ResolveMasterAddress("unix:/run/m.sock"), "unix:/run/m.sock");
  unsetenv("CRESCENT_MASTER");
}

}  // namespace
}  // namespace crescent::rpc::testing
