// Batches behave like the same calls made one by one, with real processes
// (docs/control-plane.md, "Batches"): a batch of long keys is split by bytes as well
// as by count, so that no request or reply exceeds the master's message limit,
// and transfer_timeout_ms bounds each transfer, not a whole batch.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

constexpr size_t kLongKey = 65535;
// Keys of 64 KiB each add up to more than the 64 MiB message limit.
constexpr size_t kLongKeys = 1100;

std::vector<std::string> LongKeys(const std::string& tag) {
  std::vector<std::string> keys;
  keys.reserve(kLongKeys);
  for (size_t i = 0; i < kLongKeys; ++i) {
    std::string k = tag + std::to_string(i) + "/";
    k.resize(kLongKey, static_cast<char>('a' + i % 26));
    keys.push_back(std::move(k));
  }
  return keys;
}

std::vector<std::span<const std::byte>> Spans(const std::vector<std::vector<std::byte>>& values) {
  return {values.begin(), values.end()};
}

// Param: the lean control protocol (true) or gRPC only; their limits are the same.
class LongKeyBatchTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(StartServe(dir_, {"--max-key-length", std::to_string(kLongKey)}, &serve_));
    ClientConfig config;
    config.master_address = serve_.master;
    config.lean_control = GetParam();
    StatusOr<std::unique_ptr<Client>> c = Client::Connect(config);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c).value();
  }

  TempDir dir_;
  ServeProcess serve_;
  std::unique_ptr<Client> client_;
};

TEST_P(LongKeyBatchTest, EveryBatchCallOfLongKeysAnswersEveryKey) {
  const std::vector<std::string> keys = LongKeys("k");
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < kLongKeys; ++i) values.push_back(RandomBytes(64, i));

  std::vector<Status> put = client_->BatchPut(keys, Spans(values), {}, /*chain=*/true);
  ASSERT_EQ(put.size(), kLongKeys);
  for (size_t i = 0; i < kLongKeys; ++i) ASSERT_TRUE(put[i].ok()) << i << ": " << put[i].ToString();

  std::vector<StatusOr<bool>> exists = client_->BatchExists(keys);
  ASSERT_EQ(exists.size(), kLongKeys);
  for (size_t i = 0; i < kLongKeys; ++i) {
    ASSERT_TRUE(exists[i].ok()) << i << ": " << exists[i].status().ToString();
    ASSERT_TRUE(*exists[i]) << i;
  }

  StatusOr<size_t> prefix = client_->BatchQueryPrefix(keys);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(*prefix, kLongKeys);

  std::vector<StatusOr<std::vector<std::byte>>> got = client_->BatchGet(keys);
  ASSERT_EQ(got.size(), kLongKeys);
  for (size_t i = 0; i < kLongKeys; ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().ToString();
    ASSERT_TRUE(*got[i] == values[i]) << i;
  }

  // The zero-copy forms, on one registered buffer.
  std::vector<std::byte> buffer(kLongKeys * 64);
  ASSERT_TRUE(client_->RegisterBuffer(buffer.data(), buffer.size()).ok());
  std::vector<void*> ptrs;
  std::vector<size_t> sizes(kLongKeys, 64);
  for (size_t i = 0; i < kLongKeys; ++i) ptrs.push_back(buffer.data() + i * 64);
  std::vector<StatusOr<size_t>> into = client_->BatchGetInto(keys, ptrs, sizes);
  for (size_t i = 0; i < kLongKeys; ++i) {
    ASSERT_TRUE(into[i].ok()) << i << ": " << into[i].status().ToString();
    ASSERT_TRUE(std::equal(values[i].begin(), values[i].end(), buffer.begin() + i * 64)) << i;
  }
  std::fill(buffer.begin(), buffer.end(), std::byte{0});
  StatusOr<size_t> fetched = client_->GetPrefixInto(keys, ptrs, sizes);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(*fetched, kLongKeys);
  EXPECT_TRUE(std::equal(values.back().begin(), values.back().end(), buffer.end() - 64));

  const std::vector<std::string> more = LongKeys("m");
  std::vector<Status> from = client_->BatchPutFrom(more, ptrs, sizes);
  for (size_t i = 0; i < kLongKeys; ++i)
    ASSERT_TRUE(from[i].ok()) << i << ": " << from[i].ToString();

  for (const std::vector<std::string>* batch : {&keys, &more}) {
    std::vector<Status> removed = client_->BatchRemove(*batch);
    ASSERT_EQ(removed.size(), kLongKeys);
    for (size_t i = 0; i < kLongKeys; ++i) {
      ASSERT_TRUE(removed[i].ok()) << i << ": " << removed[i].ToString();
    }
  }
  StatusOr<size_t> none = client_->BatchQueryPrefix(keys);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, 0u);
  EXPECT_TRUE(client_->UnregisterBuffer(buffer.data()).ok());  // before buffer is freed
}

INSTANTIATE_TEST_SUITE_P(Control, LongKeyBatchTest, testing::Bool(),
                         [](const auto& info) { return info.param ? "Lean" : "Grpc"; });

// Param: shared memory (true) or TCP.
class TransferTimeoutTest : public testing::TestWithParam<bool> {};

// A transfer timeout far below the time the whole batch takes, far above
// what one small transfer takes: every key is stored and read back.
TEST_P(TransferTimeoutTest, BoundsEachTransferNotTheBatch) {
  constexpr size_t kKeys = 12000;
  constexpr size_t kValue = 4096;
  TempDir dir;
  ServeProcess serve;
  ASSERT_TRUE(StartServe(dir, {}, &serve));
  ClientConfig config;
  config.master_address = serve.master;
  config.use_shared_memory = GetParam();
  config.transfer_timeout_ms = 200;
  StatusOr<std::unique_ptr<Client>> c = Client::Connect(config);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Client& client = **c;

  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> values;
  for (size_t i = 0; i < kKeys; ++i) {
    keys.push_back("t/" + std::to_string(i));
    values.push_back(RandomBytes(kValue, i));
  }
  std::vector<Status> put = client.BatchPut(keys, Spans(values));
  for (size_t i = 0; i < kKeys; ++i) ASSERT_TRUE(put[i].ok()) << i << ": " << put[i].ToString();
  std::vector<StatusOr<std::vector<std::byte>>> got = client.BatchGet(keys);
  for (size_t i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().ToString();
    ASSERT_TRUE(*got[i] == values[i]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Transport, TransferTimeoutTest, testing::Bool(),
                         [](const auto& info) { return info.param ? "Shm" : "Tcp"; });

}  // namespace
}  // namespace crescent::itest
