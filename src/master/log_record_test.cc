// LogRecord encoding: every record type round-trips, and every truncation,
// extension or unknown value is refused with kCorruptData.
#include "master/log_record.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/hex_for_test.h"
#include "master/owner_verifier.h"

namespace crescent::master {
namespace {

std::vector<LogRecord> Samples() {
  std::vector<LogRecord> out;
  LogRecord mount;
  mount.type = LogRecordType::kSegmentMounted;
  mount.segment = (7u << 16) | 3;
  mount.spec = {"seg-a", 1 << 30, "node-a", "tcp://127.0.0.1:7000#e=12345", Tier::kPmem, ~0ull,
                0x1234567890abcdefull};
  out.push_back(mount);
  LogRecord unmount;
  unmount.type = LogRecordType::kSegmentUnmounted;
  unmount.segment = 3;
  out.push_back(unmount);
  LogRecord put;
  put.type = LogRecordType::kPutEnded;
  put.key = std::string("k\0ey", 4);
  put.size = kMaxObjectSize;
  put.checksum = 0xfedcba9876543210ull;
  put.replicas = {{3, 9, 0xffffffffu, 1ull << 40}, {4, 0, 1, 0}};
  put.parent_key = "parent";
  put.hard_pin = true;
  put.soft_pin_until = INT64_MAX;
  out.push_back(put);
  LogRecord removed;
  removed.type = LogRecordType::kObjectRemoved;
  removed.key = "gone";
  removed.reason = RemovalReason::kEvicted;
  out.push_back(removed);
  LogRecord dropped;
  dropped.type = LogRecordType::kReplicaDropped;
  dropped.key = "k";
  dropped.segment = 4;
  dropped.offset = 4096;
  out.push_back(dropped);
  LogRecord ended;
  ended.type = LogRecordType::kSessionEnded;
  ended.key = "turn";
  out.push_back(ended);
  return out;
}

TEST(LogRecordTest, EveryTypeRoundTrips) {
  for (const LogRecord& r : Samples()) {
    auto back = DecodeLogRecord(EncodeLogRecord(r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, r);
  }
}

// The mount record before verifiers were kept (type 6): its owner token, ~0,
// in clear.
constexpr const char* kClearTokenMount =
    "0683801c057365672d618080808004066e6f64652d611c7463703a2f2f3132372e302e302e313a3730303023"
    "653d313233343501ffffffffffffffffff01ef9baf8589cf959a12";

// The bytes each sample encoded to before the shared codec (common/coding.h):
// logs and snapshots written then still read back, and records written now
// are the same bytes (but for the mount's type byte, 7 since its owner token
// field holds a verifier).
TEST(LogRecordTest, EncodingsAreTheGoldenBytes) {
  const char* const kGolden[] = {
      "0783801c057365672d618080808004066e6f64652d611c7463703a2f2f3132372e302e302e313a3730303023"
      "653d313233343501ffffffffffffffffff01ef9baf8589cf959a12",
      "0203",
      "03046b006579ffffffffff1f90e4d0b287d3aeeefe01020309ffffffff0f8080808080200400010006706172"
      "656e7401ffffffffffffffff7f",
      "0404676f6e6501",
      "05016b048020",
      "08047475726e",
  };
  const std::vector<LogRecord> samples = Samples();
  ASSERT_EQ(samples.size(), std::size(kGolden));
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(HexForTest(EncodeLogRecord(samples[i])), kGolden[i]) << "sample " << i;
    auto back = DecodeLogRecord(UnhexForTest(kGolden[i]));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, samples[i]);
  }
}

TEST(LogRecordTest, TruncationsAndTrailingBytesAreRefused) {
  for (const LogRecord& r : Samples()) {
    const std::string bytes = EncodeLogRecord(r);
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_EQ(DecodeLogRecord(bytes.substr(0, n)).status().code(), ErrorCode::kCorruptData)
          << "type " << int(r.type) << " cut at " << n;
    }
    EXPECT_EQ(DecodeLogRecord(bytes + '\0').status().code(), ErrorCode::kCorruptData);
  }
}

// A mount written before file identities were kept (type 1, no identity) is
// read back with none (0), and its clear owner token as the token's verifier:
// a log or snapshot from before still restores.
TEST(LogRecordTest, AMountWithoutAFileIdentityIsReadWithNone) {
  LogRecord mount = Samples()[0];
  mount.spec.file_identity = 0;
  std::string bytes = EncodeLogRecord(mount);
  ASSERT_EQ(bytes.back(), '\0');  // the identity, 0, as the last varint
  bytes.pop_back();
  bytes[0] = static_cast<char>(LogRecordType::kSegmentMounted);
  auto back = DecodeLogRecord(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  mount.spec.owner_token = OwnerVerifier(mount.spec.name, mount.spec.owner_token);
  EXPECT_EQ(*back, mount);
}

// A mount that holds its owner token in clear (type 6, as written before
// verifiers were kept) is read back with the token's verifier, the same value
// the engine keeps for a node that presents that token.
TEST(LogRecordTest, AClearOwnerTokenIsReadAsItsVerifier) {
  LogRecord expected = Samples()[0];
  expected.spec.owner_token = OwnerVerifier("seg-a", ~0ull);
  ASSERT_NE(expected.spec.owner_token, ~0ull);
  auto back = DecodeLogRecord(UnhexForTest(kClearTokenMount));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, expected);
  // A verifier is never 0 for a token, and 0 (no token) stays 0.
  EXPECT_EQ(OwnerVerifier("seg-a", 0), 0u);
  EXPECT_NE(OwnerVerifier("seg-a", 1), OwnerVerifier("seg-b", 1)) << "the name salts it";
}

// Every varint in its one encoding (common/coding.h): a padded one, which the
// decoder before it read as the same number, is refused.
TEST(LogRecordTest, APaddedVarintIsRefused) {
  ASSERT_TRUE(DecodeLogRecord(UnhexForTest("0203")).ok());  // segment 3 unmounted
  EXPECT_EQ(DecodeLogRecord(UnhexForTest("028300")).status().code(), ErrorCode::kCorruptData);
  EXPECT_EQ(DecodeLogRecord(UnhexForTest("0404676f6e6501")).status().code(), ErrorCode::kOk);
  EXPECT_EQ(DecodeLogRecord(UnhexForTest("048400676f6e6501")).status().code(),
            ErrorCode::kCorruptData);  // the key's length padded
}

TEST(LogRecordTest, UnknownValuesAreRefused) {
  EXPECT_EQ(DecodeLogRecord(std::string(1, '\x09')).status().code(), ErrorCode::kCorruptData);
  LogRecord removed = Samples()[3];
  std::string bytes = EncodeLogRecord(removed);
  bytes.back() = 7;  // no such reason
  EXPECT_EQ(DecodeLogRecord(bytes).status().code(), ErrorCode::kCorruptData);
  LogRecord put = Samples()[2];
  put.replicas.clear();  // a put has at least one replica
  EXPECT_EQ(DecodeLogRecord(EncodeLogRecord(put)).status().code(), ErrorCode::kCorruptData);
  put = Samples()[2];
  put.key.clear();
  EXPECT_EQ(DecodeLogRecord(EncodeLogRecord(put)).status().code(), ErrorCode::kCorruptData);
  LogRecord ended = Samples()[5];
  ended.key.clear();  // a session hint names its key
  EXPECT_EQ(DecodeLogRecord(EncodeLogRecord(ended)).status().code(), ErrorCode::kCorruptData);
}

}  // namespace
}  // namespace crescent::master
