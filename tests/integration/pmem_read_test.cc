// Reads with real processes where a capability may run out before the copy
// (docs/persistent-tier.md, "Reading and writing"; docs/metrics.md,
// crescent_client_lease_retries_total):
//  - a same-host client's first get from a persistent segment maps only the
//    pages it reads, not the whole file (populating it all stalled that get
//    past its lease);
//  - a get whose capability expired before its copy asks the master again (and
//    then succeeds), a bounded number of times, and counts it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

// This process's resident file-backed and shared-memory pages, in bytes: a
// mapping of the node's file counts there once its pages are mapped.
uint64_t ResidentMappedBytes() {
  std::ifstream in("/proc/self/status");
  uint64_t kib = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RssFile:", 0) == 0 || line.rfind("RssShmem:", 0) == 0) {
      kib += std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
    }
  }
  return kib << 10;
}

class PmemReadTest : public WithCluster<testing::Test> {
 protected:
  TempDir tmp_;
};

TEST_F(PmemReadTest, FirstSameHostGetFromAPersistentSegmentMapsOnlyWhatItReads) {
  constexpr uint64_t kFile = uint64_t{256} << 20;
  constexpr size_t kValue = 2 << 20;
  ASSERT_NO_FATAL_FAILURE(StartCluster(
      {.stores = 1,
       .segment_size = "4MiB",
       .store_flags = {"--pmem", tmp_.File("segment.pmem") + ":" + std::to_string(kFile)}}));
  std::unique_ptr<Client> writer = cluster_->Connect(false);
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(cluster_->WaitForSegments(*writer, 2, kStartTimeout));
  StatusOr<ClusterStat> st = writer->Stat();
  ASSERT_TRUE(st.ok());
  std::string pmem;
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == "pmem") pmem = s.name;
  }
  ASSERT_FALSE(pmem.empty());
  PutOptions o;
  o.preferred_segment = pmem;
  const std::vector<std::byte> value = RandomBytes(kValue, 38);
  ASSERT_TRUE(writer->Put("p/1", value, o).ok());

  // A fresh same-host client: its first get maps the node's segments.
  client_ = cluster_->Connect(true);
  ASSERT_NE(client_, nullptr);
  const uint64_t before = ResidentMappedBytes();
  StatusOr<std::vector<std::byte>> got = client_->Get("p/1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, value);
  EXPECT_EQ(client_->Counters().shm_fallbacks, 0u) << "the get did not go through shm";
  EXPECT_GE(client_->Counters().shm_mapped_bytes, kFile - 4096);  // less its header
  // The value's pages, the DRAM segment (4 MiB, populated) and slack; not the file.
  EXPECT_LT(ResidentMappedBytes() - before, uint64_t{32} << 20)
      << "the first get mapped the persistent file's pages eagerly";
}

// A fresh same-host client's first get maps the node's DRAM segment (1 GiB,
// populated: hundreds of ms on a VM, tens on bare metal) between the grant and
// the copy, so a 20 ms lease runs out before the copy. The get asks again, and
// the second grant finds the mapping made.
TEST_F(PmemReadTest, AReadWhoseCapabilityExpiredIsAskedAgainAndSucceeds) {
  ASSERT_NO_FATAL_FAILURE(
      StartCluster({.stores = 1,
                    .segment_size = "1GiB",
                    .master_flags = {"--lease-ms", "20", "--lease-bytes-per-ms", "0"}}));
  std::unique_ptr<Client> writer = cluster_->Connect(false);
  ASSERT_NE(writer, nullptr);
  const std::vector<std::byte> value = RandomBytes(4096, 9);
  ASSERT_TRUE(writer->Put("small", value).ok());
  client_ = cluster_->Connect(true);
  ASSERT_NE(client_, nullptr);
  StatusOr<std::vector<std::byte>> got = client_->Get("small");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, value);
  EXPECT_GE(client_->Counters().lease_retries, 1u);
  EXPECT_EQ(client_->Counters().shm_fallbacks, 0u);
}

// A 1 ms lease (no size term) cannot cover the copy of 64 MiB: every grant
// expires before or during its copy, so the get asks again, 3 times, then
// fails with LEASE_EXPIRED instead of looping.
TEST_F(PmemReadTest, AReadWhoseCapabilityExpiredIsAskedAgainABoundedNumberOfTimes) {
  constexpr size_t kValue = 64 << 20;
  ASSERT_NO_FATAL_FAILURE(
      StartAndConnect({.stores = 1,
                       .segment_size = "128MiB",
                       .master_flags = {"--lease-ms", "1", "--lease-bytes-per-ms", "0"}},
                      true));
  ASSERT_TRUE(client_->Put("big", RandomBytes(kValue, 7)).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("big");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kLeaseExpired) << got.status().ToString();
  EXPECT_EQ(client_->Counters().lease_retries, 3u);
  EXPECT_NE(client_->Metrics().find("crescent_client_lease_retries_total 3"), std::string::npos)
      << client_->Metrics();
}

}  // namespace
}  // namespace crescent::itest
