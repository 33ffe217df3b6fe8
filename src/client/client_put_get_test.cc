// Client copying API against a real in-process cluster: Put/Get/Exists/Remove
// and their batch forms, over both transports (shared memory and TCP).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::Pattern;
using client_test::Present;

class ClientPutGetTest : public ClientClusterTest {};

// Sizes that cover a single byte, one page and a value spanning many TCP frames.
TEST_P(ClientPutGetTest, RoundTripIsByteIdentical) {
  for (size_t size : {size_t{1}, size_t{4} << 10, size_t{1} << 20}) {
    SCOPED_TRACE(size);
    std::string key = "obj-" + std::to_string(size);
    std::vector<std::byte> value = Pattern(size, static_cast<uint32_t>(size));
    ASSERT_TRUE(client_->Put(key, Bytes(value)).ok());
    StatusOr<bool> exists = client_->Exists(key);
    ASSERT_TRUE(exists.ok()) << exists.status().ToString();
    EXPECT_TRUE(*exists);
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == value);
    StatusOr<uint64_t> sz = client_->GetSize(key);
    ASSERT_TRUE(sz.ok());
    EXPECT_EQ(*sz, size);
  }
}

// Keys are byte strings: bytes that are not UTF-8, and NUL, travel intact
// through every call (the control plane carries them as protobuf `bytes`).
TEST_P(ClientPutGetTest, KeysAreByteStrings) {
  const std::string prefix("bin\xff\xfe", 5);
  const std::string key = prefix + std::string("\x00\x01\x80k", 4);
  const std::string sibling = prefix + std::string("\x00\x02", 2);
  std::vector<std::byte> value = Pattern(4096, 9);
  ASSERT_TRUE(client_->Put(key, Bytes(value)).ok());
  ASSERT_TRUE(client_->Put(sibling, Bytes(value)).ok());
  EXPECT_TRUE(*client_->Exists(key));
  EXPECT_FALSE(*client_->Exists(prefix));
  StatusOr<std::vector<std::byte>> got = client_->Get(key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  StatusOr<std::vector<std::string>> listed = client_->List(prefix);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, (std::vector<std::string>{key, sibling}));
  EXPECT_TRUE(client_->Remove(key, /*force=*/true).ok());
  EXPECT_FALSE(*client_->Exists(key));
  EXPECT_TRUE(*client_->Exists(sibling));
  // Errors quote the key, bytes and all, and keep their codes.
  EXPECT_EQ(client_->Get(key).status().code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(client_->Put(sibling, Bytes(value)).code(), ErrorCode::kObjectAlreadyExists);
  ASSERT_TRUE(client_->Get(sibling).ok());
  Status leased = client_->Remove(sibling);
  EXPECT_EQ(leased.code(), ErrorCode::kObjectLeased) << leased.ToString();
  EXPECT_NE(leased.message().find(sibling), std::string::npos);
}

// Keys are write-once: a second put must not overwrite the stored bytes.
TEST_P(ClientPutGetTest, PutOfExistingKeyFailsAndKeepsValue) {
  std::vector<std::byte> first = Pattern(4096, 1);
  std::vector<std::byte> second = Pattern(4096, 2);
  ASSERT_TRUE(client_->Put("k", Bytes(first)).ok());
  Status again = client_->Put("k", Bytes(second));
  EXPECT_EQ(again.code(), ErrorCode::kObjectAlreadyExists) << again.ToString();
  StatusOr<std::vector<std::byte>> got = client_->Get("k");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == first);
  // The refused put must not linger as a pending put.
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending_puts, 0u);
  EXPECT_EQ(st->objects, 1u);
}

TEST_P(ClientPutGetTest, MissingKey) {
  StatusOr<std::vector<std::byte>> got = client_->Get("nope");
  EXPECT_EQ(got.status().code(), ErrorCode::kObjectNotFound) << got.status().ToString();
  StatusOr<bool> exists = client_->Exists("nope");
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
  EXPECT_EQ(client_->Remove("nope").code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(client_->GetSize("nope").status().code(), ErrorCode::kObjectNotFound);
}

// A Get grants a read lease (0.5 s + 1 ms per 32 KiB by default): a plain
// remove must wait for it, a forced one may not.
TEST_P(ClientPutGetTest, RemoveRespectsReadLeaseUnlessForced) {
  std::vector<std::byte> v = Pattern(100, 3);
  ASSERT_TRUE(client_->Put("leased", Bytes(v)).ok());
  ASSERT_TRUE(client_->Get("leased").ok());
  Status s = client_->Remove("leased");
  EXPECT_EQ(s.code(), ErrorCode::kObjectLeased) << s.ToString();
  EXPECT_TRUE(*client_->Exists("leased"));
  EXPECT_TRUE(client_->Remove("leased", /*force=*/true).ok());
  EXPECT_FALSE(*client_->Exists("leased"));
  EXPECT_EQ(client_->Get("leased").status().code(), ErrorCode::kObjectNotFound);
}

// A key that was never read has no lease and removes normally; its space is
// reusable by the same key.
TEST_P(ClientPutGetTest, RemoveThenPutAgain) {
  ASSERT_TRUE(client_->Put("again", Bytes(Pattern(10, 4))).ok());
  ASSERT_TRUE(client_->Remove("again").ok());
  std::vector<std::byte> v = Pattern(20, 5);
  ASSERT_TRUE(client_->Put("again", Bytes(v)).ok());
  StatusOr<std::vector<std::byte>> got = client_->Get("again");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == v);
}

// Empty keys are invalid; the error comes back for that key alone.
TEST_P(ClientPutGetTest, InvalidKey) {
  std::vector<std::byte> v = Pattern(8, 6);
  EXPECT_EQ(client_->Put("", Bytes(v)).code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(client_->Get("").status().code(), ErrorCode::kInvalidKey);
}

// Batch results are per key and in input order: stored keys succeed, a missing
// key and an invalid (empty) key fail alone without spoiling their neighbours.
TEST_P(ClientPutGetTest, BatchFormsReportPerKeyInInputOrder) {
  std::vector<std::string> keys = {"b0", "", "b2", "b3"};
  std::vector<std::vector<std::byte>> values = {Pattern(1, 10), Pattern(2, 11), Pattern(4096, 12),
                                                Pattern(70000, 13)};
  std::vector<std::span<const std::byte>> spans(values.begin(), values.end());
  std::vector<Status> put = client_->BatchPut(keys, spans);
  ASSERT_EQ(put.size(), 4u);
  EXPECT_TRUE(put[0].ok()) << put[0].ToString();
  EXPECT_EQ(put[1].code(), ErrorCode::kInvalidKey) << put[1].ToString();
  EXPECT_TRUE(put[2].ok()) << put[2].ToString();
  EXPECT_TRUE(put[3].ok()) << put[3].ToString();

  std::vector<std::string> get_keys = {"b3", "missing", "", "b0", "b2"};
  auto got = client_->BatchGet(get_keys);
  ASSERT_EQ(got.size(), 5u);
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_TRUE(*got[0] == values[3]);
  EXPECT_EQ(got[1].status().code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(got[2].status().code(), ErrorCode::kInvalidKey);
  ASSERT_TRUE(got[3].ok());
  EXPECT_TRUE(*got[3] == values[0]);
  ASSERT_TRUE(got[4].ok());
  EXPECT_TRUE(*got[4] == values[2]);

  std::vector<std::string> ex_keys = {"b2", "missing", "b0", "b3", "zzz"};
  EXPECT_EQ(Present(client_->BatchExists(ex_keys)), (std::vector<int>{1, 0, 1, 1, 0}));

  // b0 and b2 were just read (leased): only force removes them; "missing" fails.
  std::vector<std::string> rm_keys = {"b0", "missing", "b2"};
  std::vector<Status> rm = client_->BatchRemove(rm_keys);
  ASSERT_EQ(rm.size(), 3u);
  EXPECT_EQ(rm[0].code(), ErrorCode::kObjectLeased);
  EXPECT_EQ(rm[1].code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(rm[2].code(), ErrorCode::kObjectLeased);
  rm = client_->BatchRemove(rm_keys, /*force=*/true);
  EXPECT_TRUE(rm[0].ok());
  EXPECT_EQ(rm[1].code(), ErrorCode::kObjectNotFound);
  EXPECT_TRUE(rm[2].ok());
  EXPECT_EQ(Present(client_->BatchExists(ex_keys)), (std::vector<int>{0, 0, 0, 1, 0}));
}

// A value count that does not match the key count is refused for every key.
TEST_P(ClientPutGetTest, BatchPutWithMismatchedValuesIsInvalid) {
  std::vector<std::string> keys = {"x", "y"};
  std::vector<std::byte> v = Pattern(4, 7);
  std::vector<std::span<const std::byte>> spans = {Bytes(v)};
  std::vector<Status> put = client_->BatchPut(keys, spans);
  ASSERT_EQ(put.size(), 2u);
  for (const Status& s : put) EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(*client_->Exists("x"));
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientPutGetTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
