// A reader's corruption report with real processes (docs/capabilities.md,
// "End-to-end checksums"): the master drops nothing on a reader's word. It has
// the replica's store node hash the stored range against the value's checksum,
// and a report the node disproves (the reader's own buffer changed during the
// get, or its memory is faulty) keeps the replica, even an object's last one;
// bytes that really changed in the node's memory are still found and dropped.
#include <gtest/gtest.h>
#include <sys/types.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/cluster.h"
#include "rpc/master_client.h"

namespace crescent::itest {
namespace {

constexpr size_t kValue = 300000;

// Flips one byte in the middle of every copy of `value` in the DRAM segment of
// store process `pid`: a stray write (a fault in the node's memory) that the
// data plane never sees. The segment's memfd is sealed against new writable
// mappings, so this writes through /proc/PID/mem at the node's own mapping
// (this test is the node's parent, which may). Returns the copies changed.
int CorruptInNode(pid_t pid, const std::vector<std::byte>& value) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::fstream mem("/proc/" + std::to_string(pid) + "/mem",
                   std::ios::in | std::ios::out | std::ios::binary);
  const std::string needle(reinterpret_cast<const char*>(value.data()), value.size());
  int changed = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms;
    fields >> range >> perms;
    if (perms != "rw-s" || line.find("/memfd:") == std::string::npos) continue;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uint64_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    std::string bytes(end - start, '\0');
    mem.seekg(static_cast<std::streamoff>(start));
    mem.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!mem) return -1;
    for (size_t at = bytes.find(needle); at != std::string::npos; at = bytes.find(needle, at + 1)) {
      const size_t mid = at + needle.size() / 2;
      mem.seekp(static_cast<std::streamoff>(start + mid));
      mem.put(static_cast<char>(bytes[mid] ^ 0x5a));
      mem.flush();
      ++changed;
    }
  }
  return changed;
}

class CorruptionReportTest : public WithCluster<testing::Test> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartAndConnect({.stores = 1, .store_shm = false}, false));
    rpc::MasterClientOptions o;
    o.address = cluster_->master_address();
    auto master = rpc::MasterClient::Create(o);
    ASSERT_TRUE(master.ok()) << master.status().ToString();
    master_ = std::move(master).value();
  }

  uint64_t MasterCounter(const std::string& name) {
    StatusOr<ClusterStat> st = client_->Stat();
    return st.ok() ? st->counters[name] : 0;
  }

  // Polls (bounded: a hang guard) until `done` holds.
  template <typename F>
  bool Eventually(F done) {
    for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(milliseconds(25));
    return done();
  }

  std::unique_ptr<rpc::MasterClient> master_;
};

// What a reader whose buffer changed during its get reports: the replica it
// read, with the value's checksum. Its node's bytes match, so it stays.
TEST_F(CorruptionReportTest, AReportOfAHealthyReplicaIsDisprovedAndDropsNothing) {
  const std::vector<std::byte> value = RandomBytes(kValue, 1);
  ASSERT_TRUE(client_->Put("healthy", value).ok());
  StatusOr<rpc::RemoteRead> read = master_->GetReplicaList("healthy");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->replicas.size(), 1u) << "its only replica: the object would go with it";
  const transfer::Capability& cap = read->replicas[0].cap;
  Status reported =
      master_->ReportCorruptReplica("healthy", cap.segment, cap.offset, read->checksum);
  ASSERT_TRUE(reported.ok()) << reported.ToString();
  // Until the node's verdict, or the object is gone.
  auto disproved = [&] {
    return MasterCounter("crescent_corruption_reports_total{result=\"disproved\"}");
  };
  (void)Eventually([&] {
    StatusOr<bool> there = client_->Exists("healthy");
    return disproved() == 1 || (there.ok() && !*there);
  });
  StatusOr<std::vector<std::byte>> got = client_->Get("healthy");
  ASSERT_TRUE(got.ok()) << "a reader's word destroyed healthy data: " << got.status().ToString();
  EXPECT_TRUE(*got == value);
  EXPECT_EQ(disproved(), 1u);
  EXPECT_EQ(MasterCounter("crescent_corruption_reports_total{result=\"confirmed\"}"), 0u);
  EXPECT_EQ(MasterCounter("crescent_corrupt_objects_total"), 0u);
}

// Bytes that changed in the node's memory: the reader's report is confirmed by
// the node, and the object (its only replica bad) is dropped.
TEST_F(CorruptionReportTest, ARealCorruptionIsConfirmedByItsNodeAndDropped) {
  const std::vector<std::byte> value = RandomBytes(kValue, 2);
  ASSERT_TRUE(client_->Put("spoiled", value).ok());
  ASSERT_EQ(CorruptInNode(cluster_->store(0).proc->pid(), value), 1);
  StatusOr<std::vector<std::byte>> got = client_->Get("spoiled");
  EXPECT_EQ(got.status().code(), ErrorCode::kChecksumMismatch) << got.status().ToString();
  ASSERT_TRUE(Eventually([&] {
    StatusOr<bool> there = client_->Exists("spoiled");
    return there.ok() && !*there;
  })) << "the corrupt object was kept";
  EXPECT_EQ(MasterCounter("crescent_corruption_reports_total{result=\"confirmed\"}"), 1u);
  EXPECT_EQ(MasterCounter("crescent_corruption_reports_total{result=\"disproved\"}"), 0u);
  EXPECT_EQ(MasterCounter("crescent_corrupt_objects_total"), 1u);
  EXPECT_EQ(client_->Get("spoiled").status().code(), ErrorCode::kObjectNotFound);
}

}  // namespace
}  // namespace crescent::itest
