// The client API against a real master and two real store nodes, once over
// same-host shared memory and once over TCP only: every byte that goes in must
// come back identical.
#include <gtest/gtest.h>

#include <algorithm>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;
const std::vector<size_t> kSizes = {1, 64 * kKiB, 1 * kMiB, 4 * kMiB};

// Param: true = shared memory (nodes offer it, client uses it); false = TCP only.
class ClusterBasicTest : public WithCluster<testing::TestWithParam<bool>> {
 protected:
  static ClusterOptions Options(bool shm) {
    ClusterOptions o;
    o.stores = 2;
    o.store_shm = shm;
    // The TCP-only run also has each node serve every lane on one thread.
    if (!shm) o.store_flags = {"--data-threads", "1"};
    return o;
  }
  void SetUp() override { StartAndConnect(Options(GetParam()), GetParam()); }
};

TEST_P(ClusterBasicTest, EndpointsOfferTheChosenTransport) {
  for (size_t i = 0; i < cluster_->store_count(); ++i) {
    bool offers_shm = cluster_->store(i).endpoint.find(";shm=") != std::string::npos;
    EXPECT_EQ(offers_shm, GetParam()) << cluster_->store(i).endpoint;
  }
}

TEST_P(ClusterBasicTest, PutGetExistsRemove) {
  uint32_t seed = 1;
  for (size_t size : kSizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    std::string key = "basic/" + std::to_string(size);
    std::vector<std::byte> value = RandomBytes(size, seed++);
    ASSERT_TRUE(client_->Put(key, value).ok());

    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(got.value() == value);
    StatusOr<bool> exists = client_->Exists(key);
    ASSERT_TRUE(exists.ok());
    EXPECT_TRUE(exists.value());
    StatusOr<uint64_t> got_size = client_->GetSize(key);
    ASSERT_TRUE(got_size.ok());
    EXPECT_EQ(got_size.value(), size);

    // A second put of a stored key is refused and leaves the first value.
    EXPECT_EQ(client_->Put(key, RandomBytes(size, 999)).code(), ErrorCode::kObjectAlreadyExists);
    got = client_->Get(key);
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got.value() == value);

    // Force: the get above holds a read lease.
    Status removed = client_->Remove(key, /*force=*/true);
    ASSERT_TRUE(removed.ok()) << removed.ToString();
    exists = client_->Exists(key);
    ASSERT_TRUE(exists.ok());
    EXPECT_FALSE(exists.value());
    EXPECT_EQ(client_->Get(key).status().code(), ErrorCode::kObjectNotFound);
  }
}

TEST_P(ClusterBasicTest, BatchOperations) {
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < 8; ++i) {
    keys.push_back("batch/" + std::to_string(i));
    values.push_back(RandomBytes(kSizes[i % kSizes.size()], 100 + static_cast<uint32_t>(i)));
  }
  std::vector<std::span<const std::byte>> spans(values.begin(), values.end());
  std::vector<Status> put = client_->BatchPut(keys, spans);
  ASSERT_EQ(put.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_TRUE(put[i].ok()) << keys[i] << ": " << put[i].ToString();

  std::vector<std::string> with_missing = keys;
  with_missing.insert(with_missing.begin() + 3, "batch/missing");
  auto got = client_->BatchGet(with_missing);
  ASSERT_EQ(got.size(), with_missing.size());
  for (size_t i = 0, v = 0; i < with_missing.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(got[i].status().code(), ErrorCode::kObjectNotFound);
      continue;
    }
    ASSERT_TRUE(got[i].ok()) << with_missing[i] << ": " << got[i].status().ToString();
    EXPECT_TRUE(got[i].value() == values[v]) << with_missing[i];
    ++v;
  }

  std::vector<StatusOr<bool>> exists = client_->BatchExists(with_missing);
  ASSERT_EQ(exists.size(), with_missing.size());
  for (size_t i = 0; i < with_missing.size(); ++i) {
    ASSERT_TRUE(exists[i].ok()) << exists[i].status().ToString();
    EXPECT_EQ(*exists[i], i != 3) << i;
  }

  std::vector<Status> removed = client_->BatchRemove(keys, /*force=*/true);
  ASSERT_EQ(removed.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_TRUE(removed[i].ok()) << removed[i].ToString();
  for (const StatusOr<bool>& e : client_->BatchExists(keys)) {
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_FALSE(*e);
  }
}

TEST_P(ClusterBasicTest, PrefixChainQueryAndFetch) {
  constexpr size_t kPages = 6;
  constexpr size_t kPage = 64 * kKiB;
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> pages;
  for (size_t i = 0; i < kPages; ++i) {
    keys.push_back("chain/page" + std::to_string(i));
    pages.push_back(RandomBytes(kPage, 200 + static_cast<uint32_t>(i)));
  }
  std::vector<std::span<const std::byte>> spans(pages.begin(), pages.end());
  std::vector<Status> put = client_->BatchPut(keys, spans, {}, /*chain=*/true);
  for (size_t i = 0; i < kPages; ++i) ASSERT_TRUE(put[i].ok()) << put[i].ToString();

  // The stored chain, then two pages nobody stored.
  std::vector<std::string> query = keys;
  query.push_back("chain/page6");
  query.push_back("chain/page7");
  StatusOr<size_t> hit = client_->BatchQueryPrefix(query);
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_EQ(hit.value(), kPages);

  // A miss in the middle ends the prefix there.
  std::vector<std::string> holed = {keys[0], keys[1], keys[2], "chain/nope", keys[4]};
  hit = client_->BatchQueryPrefix(holed);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit.value(), 3u);

  std::vector<std::byte> buffer(query.size() * kPage);
  ASSERT_TRUE(client_->RegisterBuffer(buffer.data(), buffer.size()).ok());
  std::vector<void*> ptrs;
  std::vector<size_t> caps(query.size(), kPage);
  for (size_t i = 0; i < query.size(); ++i) ptrs.push_back(buffer.data() + i * kPage);
  StatusOr<size_t> fetched = client_->GetPrefixInto(query, ptrs, caps);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched.value(), kPages);
  for (size_t i = 0; i < kPages; ++i) {
    EXPECT_TRUE(std::equal(pages[i].begin(), pages[i].end(), buffer.begin() + i * kPage))
        << "page " << i;
  }
  ASSERT_TRUE(client_->UnregisterBuffer(buffer.data()).ok());
}

TEST_P(ClusterBasicTest, ZeroCopyOnRegisteredBuffers) {
  std::vector<std::byte> src = RandomBytes(4 * kMiB + 3, 300);
  std::vector<std::byte> dst(src.size() + 100);
  ASSERT_TRUE(client_->RegisterBuffer(src.data(), src.size()).ok());
  ASSERT_TRUE(client_->RegisterBuffer(dst.data(), dst.size()).ok());

  // Sub-ranges of a registered buffer are fine.
  for (size_t size : kSizes) {
    std::string key = "zc/" + std::to_string(size);
    const std::byte* from = src.data() + 3;  // an unaligned start
    Status put = client_->PutFrom(key, from, size);
    ASSERT_TRUE(put.ok()) << put.ToString();
    StatusOr<size_t> got = client_->GetInto(key, dst.data() + 1, dst.size() - 1);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got.value(), size);
    EXPECT_TRUE(std::equal(from, from + size, dst.begin() + 1)) << key;
  }

  // Memory outside every registered buffer is refused, not read.
  std::vector<std::byte> stray(16);
  EXPECT_EQ(client_->PutFrom("zc/stray", stray.data(), stray.size()).code(),
            ErrorCode::kBufferNotRegistered);
  EXPECT_EQ(client_->GetInto("zc/1", stray.data(), stray.size()).status().code(),
            ErrorCode::kBufferNotRegistered);
  EXPECT_TRUE(client_->UnregisterBuffer(src.data()).ok());
  EXPECT_TRUE(client_->UnregisterBuffer(dst.data()).ok());
}

TEST_P(ClusterBasicTest, ListAndStat) {
  std::vector<std::string> keys = {"ls/b", "ls/a", "ls/c/1", "other/x"};
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(client_->Put(keys[i], RandomBytes(1000, static_cast<uint32_t>(i))).ok());
  }
  StatusOr<std::vector<std::string>> listed = client_->List("ls/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed.value(), (std::vector<std::string>{"ls/a", "ls/b", "ls/c/1"}));
  listed = client_->List("ls/", 2);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed.value().size(), 2u);

  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st.value().objects, keys.size());
  EXPECT_EQ(st.value().pending_puts, 0u);
  EXPECT_GE(st.value().used_bytes, 4000u);
  ASSERT_EQ(st.value().segments.size(), 2u);
  EXPECT_EQ(st.value().capacity_bytes, 2 * 64 * kMiB);
  std::vector<std::string> endpoints, expected;
  for (const SegmentUsage& seg : st.value().segments) endpoints.push_back(seg.endpoint);
  for (size_t i = 0; i < 2; ++i) expected.push_back(cluster_->store(i).endpoint);
  std::sort(endpoints.begin(), endpoints.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(endpoints, expected);

  StatusOr<size_t> removed = client_->RemoveByPrefix("ls/", /*force=*/true);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed.value(), 3u);
  listed = client_->List("");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed.value(), (std::vector<std::string>{"other/x"}));
}

INSTANTIATE_TEST_SUITE_P(Transports, ClusterBasicTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("SharedMemory") : std::string("Tcp");
                         });

}  // namespace
}  // namespace crescent::itest
