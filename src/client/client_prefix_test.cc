// Client prefix API: a chain of KV-cache pages put with BatchPut(chain=true) is
// queried by its longest stored prefix (BatchQueryPrefix) and fetched into
// caller buffers (GetPrefixInto), over both transports. The prefix ends at the
// first page that is missing or cannot be read, and buffers past it are left
// as they were.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::ClientClusterTest;
using client_test::Pattern;

constexpr size_t kPages = 8;
constexpr size_t kPageSize = 16 << 10;
constexpr std::byte kSentinel{0x5A};

class ClientPrefixTest : public ClientClusterTest {
 protected:
  void SetUp() override {
    ClientClusterTest::SetUp();
    for (size_t i = 0; i < kPages; ++i) {
      keys_.push_back("seq/page-" + std::to_string(i));
      pages_.push_back(Pattern(kPageSize, static_cast<uint32_t>(100 + i)));
    }
    arena_.assign(kPages * kPageSize, kSentinel);
    ASSERT_TRUE(client_->RegisterBuffer(arena_.data(), arena_.size()).ok());
    for (size_t i = 0; i < kPages; ++i) {
      ptrs_.push_back(arena_.data() + i * kPageSize);
      caps_.push_back(kPageSize);
    }
  }

  // The arena is freed before the base fixture's client: unregistered first
  // (the client's page warmer may still read it).
  void TearDown() override {
    if (client_ != nullptr && !arena_.empty()) (void)client_->UnregisterBuffer(arena_.data());
    ClientClusterTest::TearDown();
  }

  void PutChain() {
    std::vector<std::span<const std::byte>> spans(pages_.begin(), pages_.end());
    for (const Status& s : client_->BatchPut(keys_, spans, {}, /*chain=*/true)) {
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }

  bool PageFetched(size_t i) const {
    return std::memcmp(arena_.data() + i * kPageSize, pages_[i].data(), kPageSize) == 0;
  }
  bool PageUntouched(size_t i) const {
    for (size_t b = 0; b < kPageSize; ++b) {
      if (arena_[i * kPageSize + b] != kSentinel) return false;
    }
    return true;
  }

  // GetPrefixInto over the whole chain fetches the first `k` pages into their
  // buffers and leaves the buffers past them untouched.
  void ExpectPrefixFetched(size_t k) {
    StatusOr<size_t> got = client_->GetPrefixInto(keys_, ptrs_, caps_);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, k);
    for (size_t i = 0; i < k; ++i) EXPECT_TRUE(PageFetched(i)) << i;
    for (size_t i = k; i < kPages; ++i) EXPECT_TRUE(PageUntouched(i)) << i;
  }

  std::vector<std::string> keys_;
  std::vector<std::vector<std::byte>> pages_;
  std::vector<std::byte> arena_;
  std::vector<void*> ptrs_;
  std::vector<size_t> caps_;
};

TEST_P(ClientPrefixTest, WholeChainIsThePrefix) {
  PutChain();
  StatusOr<size_t> n = client_->BatchQueryPrefix(keys_);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kPages);
  ExpectPrefixFetched(kPages);
}

// Removing page k cuts the prefix at k even though later pages still exist.
TEST_P(ClientPrefixTest, MissingPageEndsThePrefix) {
  PutChain();
  constexpr size_t k = 3;
  ASSERT_TRUE(client_->Remove(keys_[k]).ok());
  StatusOr<size_t> n = client_->BatchQueryPrefix(keys_);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, k);
  ExpectPrefixFetched(k);
}

TEST_P(ClientPrefixTest, NoFirstPageMeansEmptyPrefix) {
  PutChain();
  ASSERT_TRUE(client_->Remove(keys_[0]).ok());
  EXPECT_EQ(*client_->BatchQueryPrefix(keys_), 0u);
  ExpectPrefixFetched(0);
}

// A page whose buffer is too small cannot be read, so it ends the prefix; the
// pages after it must not be written into their buffers either, since the
// caller is told they were not fetched.
TEST_P(ClientPrefixTest, TooSmallBufferEndsThePrefixAndLeavesLaterBuffersAlone) {
  PutChain();
  constexpr size_t k = 5;
  caps_[k] = kPageSize - 1;
  ExpectPrefixFetched(k);
}

// The first page's buffer being unusable is the caller's error, not a miss.
TEST_P(ClientPrefixTest, FirstPageBufferErrorIsReported) {
  PutChain();
  caps_[0] = 1;
  EXPECT_EQ(client_->GetPrefixInto(keys_, ptrs_, caps_).status().code(),
            ErrorCode::kBufferTooSmall);
  caps_[0] = kPageSize;
  std::vector<std::byte> elsewhere(kPageSize);
  ptrs_[0] = elsewhere.data();
  EXPECT_EQ(client_->GetPrefixInto(keys_, ptrs_, caps_).status().code(),
            ErrorCode::kBufferNotRegistered);
}

TEST_P(ClientPrefixTest, MismatchedSpansAreInvalid) {
  PutChain();
  std::vector<size_t> short_caps(caps_.begin(), caps_.end() - 1);
  EXPECT_EQ(client_->GetPrefixInto(keys_, ptrs_, short_caps).status().code(),
            ErrorCode::kInvalidArgument);
}

// A chain written with BatchPutFrom from registered memory reads back the same.
TEST_P(ClientPrefixTest, ZeroCopyChainPut) {
  for (size_t i = 0; i < kPages; ++i) {
    std::memcpy(ptrs_[i], pages_[i].data(), kPageSize);
  }
  for (const Status& s : client_->BatchPutFrom(keys_, ptrs_, caps_, {}, /*chain=*/true)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::fill(arena_.begin(), arena_.end(), kSentinel);
  ExpectPrefixFetched(kPages);
}

// PutOptions::parent_key links a chained batch's first page to a page
// already stored, as key i is linked to key i-1 within the batch: under
// prefix-lru (leaves only, least recent first) the stored head then outlives
// the batch's tail, though it is the oldest.
class ClientChainParentTest : public ClientClusterTest {
 protected:
  server::LocalClusterOptions Options() override {
    server::LocalClusterOptions o = ClientClusterTest::Options();
    o.master.config.eviction_policy = "prefix-lru";
    return o;
  }
};

TEST_P(ClientChainParentTest, AChainedBatchExtendsItsStoredParent) {
  const std::vector<std::byte> page = Pattern(4096, 7);
  ASSERT_TRUE(client_->Put("conv/0", page).ok());
  const std::vector<std::string> run{"conv/1", "conv/2"};
  const std::vector<std::span<const std::byte>> values(run.size(), page);
  PutOptions linked;
  linked.parent_key = "conv/0";
  for (const Status& s : client_->BatchPut(run, values, linked, /*chain=*/true)) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(client_->Put("other", page).ok());
  ASSERT_GE(cluster_->master().EvictBytes(1), 1u);
  EXPECT_TRUE(*client_->Exists("conv/0")) << "a head with a cached child is no leaf";
  EXPECT_FALSE(*client_->Exists("conv/2")) << "the least recent leaf";
  EXPECT_TRUE(*client_->Exists("conv/1"));
  EXPECT_TRUE(*client_->Exists("other"));
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientChainParentTest, ::testing::Bool(),
                         client_test::TransportName);

INSTANTIATE_TEST_SUITE_P(Transports, ClientPrefixTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
