// Copy-ahead (client/placement_hints.h): a same-host get copies the object from
// where the client last saw it while the lease is granted, and keeps those
// bytes only when the reply names the same replica and allocation. These tests
// move objects behind the client's back, through a second client, and check
// that it never hands back the bytes it copied from the old place.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClusterTest;
using client_test::ConfigFor;
using client_test::ConnectTo;
using client_test::ConnectWith;
using client_test::Pattern;
using client_test::SmallCluster;

constexpr size_t kSize = size_t{256} << 10;

// reader_ is the client whose copies ahead are checked; other_ moves objects
// behind its back.
class CopyAheadTest : public ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartAndConnect(SmallCluster(1, /*shared_memory=*/true)));
    reader_ = client_.get();
    other_ = ConnectTo(*cluster_);
    ASSERT_NE(other_, nullptr);
    buf_.assign(kSize, std::byte{0});
    ASSERT_TRUE(reader_->RegisterBuffer(buf_.data(), buf_.size()).ok());
  }
  void TearDown() override {
    if (reader_) {
      EXPECT_TRUE(reader_->UnregisterBuffer(buf_.data()).ok());
    }
    other_.reset();
    ClusterTest::TearDown();
  }

  // GetInto the reader's buffer; the bytes it returned.
  std::vector<std::byte> ReadBack(const std::string& key) {
    std::fill(buf_.begin(), buf_.end(), std::byte{0});
    StatusOr<size_t> n = reader_->GetInto(key, buf_.data(), buf_.size());
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok()) return {};
    return {buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(*n)};
  }

  Client* reader_ = nullptr;  // client_, under its role here
  std::unique_ptr<Client> other_;
  std::vector<std::byte> buf_;
};

TEST_F(CopyAheadTest, OwnPutIsCopiedDuringTheLeaseRoundTrip) {
  std::vector<std::byte> v = Pattern(kSize, 1);
  ASSERT_TRUE(reader_->Put("k", Bytes(v)).ok());
  EXPECT_EQ(ReadBack("k"), v);
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 1u);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 0u);

  // The copying API and the batch form take the same path.
  StatusOr<std::vector<std::byte>> got = reader_->Get("k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, v);
  std::vector<StatusOr<std::vector<std::byte>>> batch =
      reader_->BatchGet(std::vector<std::string>{"k"});
  ASSERT_TRUE(batch[0].ok());
  EXPECT_EQ(*batch[0], v);
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 3u);
}

TEST_F(CopyAheadTest, ReadsOfOthersObjectsAreCopiedAheadNextTime) {
  std::vector<std::byte> v = Pattern(kSize, 2);
  ASSERT_TRUE(other_->Put("k", Bytes(v)).ok());
  EXPECT_EQ(ReadBack("k"), v);  // no hint yet: an ordinary read
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 0u);
  EXPECT_EQ(ReadBack("k"), v);  // the first read left a hint
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 1u);
}

// The reader's hint names a range that now holds another key's bytes, while the
// key itself was put again elsewhere: the copy is discarded, the new value read.
TEST_F(CopyAheadTest, ReplacedObjectIsReadFromItsNewPlace) {
  std::vector<std::byte> old_value = Pattern(kSize, 3);
  std::vector<std::byte> filler = Pattern(kSize, 4);
  std::vector<std::byte> new_value = Pattern(kSize, 5);
  ASSERT_TRUE(reader_->Put("k", Bytes(old_value)).ok());
  ASSERT_TRUE(other_->Remove("k", true).ok());
  ASSERT_TRUE(other_->Put("filler", Bytes(filler)).ok());  // takes k's old range
  ASSERT_TRUE(other_->Put("k", Bytes(new_value)).ok());

  EXPECT_EQ(ReadBack("k"), new_value);
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 0u);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 1u);
  EXPECT_EQ(ReadBack("k"), new_value);  // the hint now names the new place
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 1u);
}

// A get into slices (the engines' layer-first pages) is copied ahead as a get
// into one buffer is: the slices hold the value in order, and a value moved
// behind the reader's back is read from its new place.
TEST_F(CopyAheadTest, SlicesAreCopiedAheadInOrder) {
  // Uneven slices of the reader's buffer, laid out in reverse order.
  std::vector<size_t> sizes = {1000, 65539, 33, 131072};
  sizes.push_back(kSize - 1000 - 65539 - 33 - 131072);
  std::vector<MemorySlice> slices;
  size_t end = kSize;
  for (size_t n : sizes) {
    end -= n;
    slices.push_back({buf_.data() + end, n});
  }
  auto read = [&](const std::string& key) {
    std::fill(buf_.begin(), buf_.end(), std::byte{0});
    std::vector<StatusOr<size_t>> r = reader_->BatchGetIntoSlices(
        std::vector<std::string>{key}, std::vector<std::vector<MemorySlice>>{slices});
    EXPECT_TRUE(r[0].ok()) << r[0].status().ToString();
    std::vector<std::byte> joined;
    for (const MemorySlice& m : slices) {
      const auto* p = static_cast<const std::byte*>(m.data);
      joined.insert(joined.end(), p, p + m.size);
    }
    return joined;
  };
  std::vector<std::byte> v = Pattern(kSize, 8);
  ASSERT_TRUE(reader_->Put("k", Bytes(v)).ok());
  EXPECT_EQ(read("k"), v);
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 1u);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 0u);

  std::vector<std::byte> new_value = Pattern(kSize, 9);
  ASSERT_TRUE(other_->Remove("k", true).ok());
  ASSERT_TRUE(other_->Put("filler", Bytes(Pattern(kSize, 10))).ok());  // takes k's old range
  ASSERT_TRUE(other_->Put("k", Bytes(new_value)).ok());
  EXPECT_EQ(read("k"), new_value);
  EXPECT_EQ(reader_->Counters().copy_ahead_kept, 1u);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 1u);
}

TEST_F(CopyAheadTest, RemovedObjectIsMissingNotServedFromTheOldPlace) {
  std::vector<std::byte> v = Pattern(kSize, 6);
  ASSERT_TRUE(reader_->Put("k", Bytes(v)).ok());
  ASSERT_TRUE(other_->Remove("k", true).ok());
  EXPECT_EQ(reader_->GetInto("k", buf_.data(), buf_.size()).status().code(),
            ErrorCode::kObjectNotFound);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 1u);
  // The miss dropped the hint: no second wasted copy.
  EXPECT_EQ(reader_->GetInto("k", buf_.data(), buf_.size()).status().code(),
            ErrorCode::kObjectNotFound);
  EXPECT_EQ(reader_->Counters().copy_ahead_discarded, 1u);
}

TEST_F(CopyAheadTest, TooSmallBufferIsStillRefusedWithTheNeededSize) {
  std::vector<std::byte> v = Pattern(kSize, 7);
  ASSERT_TRUE(reader_->Put("k", Bytes(v)).ok());
  std::fill(buf_.begin(), buf_.end(), std::byte{0x5A});
  StatusOr<size_t> n = reader_->GetInto("k", buf_.data(), kSize - 1);
  EXPECT_EQ(n.status().code(), ErrorCode::kBufferTooSmall);
  EXPECT_NE(n.status().message().find(std::to_string(kSize)), std::string::npos);
  EXPECT_EQ(buf_[0], std::byte{0x5A});  // nothing was copied into it
  EXPECT_EQ(reader_->Counters().copy_ahead_kept + reader_->Counters().copy_ahead_discarded, 0u);
}

TEST_F(CopyAheadTest, OffByConfigReadsNormally) {
  ClientConfig cc = ConfigFor(*cluster_);
  cc.placement_hints = 0;
  std::unique_ptr<Client> plain = ConnectWith(cc);
  ASSERT_NE(plain, nullptr);
  std::vector<std::byte> v = Pattern(kSize, 8);
  ASSERT_TRUE(plain->Put("k", Bytes(v)).ok());
  StatusOr<std::vector<std::byte>> got = plain->Get("k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, v);
  EXPECT_EQ(plain->Counters().copy_ahead_kept, 0u);
}

// Prefix fetches never copy ahead: pages past the prefix must stay untouched.
TEST_F(CopyAheadTest, PrefixFetchLeavesPagesPastThePrefixUntouched) {
  std::vector<std::byte> a = Pattern(kSize / 2, 9), b = Pattern(kSize / 2, 10);
  ASSERT_TRUE(reader_->Put("p0", Bytes(a)).ok());
  ASSERT_TRUE(reader_->Put("p1", Bytes(b)).ok());
  ASSERT_TRUE(other_->Remove("p0", true).ok());  // the prefix is now empty
  std::fill(buf_.begin(), buf_.end(), std::byte{0x5A});
  std::vector<std::string> keys = {"p0", "p1"};
  std::vector<void*> ptrs = {buf_.data(), buf_.data() + kSize / 2};
  std::vector<size_t> caps = {kSize / 2, kSize / 2};
  StatusOr<size_t> n = reader_->GetPrefixInto(keys, ptrs, caps);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0u);
  EXPECT_EQ(buf_[kSize / 2], std::byte{0x5A});
}

// The client maps the node's segment at its first same-host transfer and then
// reads each page of it once in the background, so that later gets do not
// pay first-access traps (transfer/page_warmer.h); its counters say how far
// that got. A client without shared memory maps nothing.
TEST_F(CopyAheadTest, TheClientWarmsItsMappingOfTheSegment) {
  EXPECT_EQ(reader_->Counters().shm_mapped_bytes, 0u);
  std::vector<std::byte> v = Pattern(kSize, 9);
  ASSERT_TRUE(reader_->Put("warm", Bytes(v)).ok());
  ClientCounters c = reader_->Counters();
  EXPECT_GT(c.shm_mapped_bytes, 0u);
  EXPECT_LE(c.shm_warmed_bytes, c.shm_mapped_bytes);
  for (int i = 0; i < 6000 && c.shm_warmed_bytes < c.shm_mapped_bytes; ++i) {
    EXPECT_EQ(ReadBack("warm"), v);  // gets go on while it warms
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    c = reader_->Counters();
  }
  EXPECT_EQ(c.shm_warmed_bytes, c.shm_mapped_bytes);
  EXPECT_EQ(ReadBack("warm"), v);
  std::unique_ptr<Client> tcp_only = ConnectTo(*cluster_, /*use_shared_memory=*/false);
  ASSERT_NE(tcp_only, nullptr);
  ASSERT_TRUE(tcp_only->Get("warm").ok());
  EXPECT_EQ(tcp_only->Counters().shm_mapped_bytes, 0u);
}

}  // namespace
}  // namespace crescent
