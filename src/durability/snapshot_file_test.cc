// Snapshot files: records round-trip across blocks; every kind of damage is
// refused naming the file and the block; the newest N are kept.
#include "durability/snapshot_file.h"

#include <gtest/gtest.h>
#include <xxhash.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/coding.h"
#include "common/hex_for_test.h"
#include "durability/test_dir_for_test.h"

namespace crescent::durability {
namespace {

namespace fs = std::filesystem;

class SnapshotFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("snapshot_file_test"); }
  void TearDown() override { fs::remove_all(dir_); }

  static master::LogRecord Object(uint64_t i) {
    master::LogRecord r;
    r.type = master::LogRecordType::kPutEnded;
    r.key = "key-" + std::to_string(i);
    r.size = 4096 + i;
    r.checksum = i * 0x9e3779b97f4a7c15ull;
    r.replicas = {{1, static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1), i * 4096}};
    return r;
  }

  // Writes `n` object records at `position`; returns the file's path.
  std::string Write(uint64_t n, uint64_t position = 100) {
    auto w = SnapshotWriter::Create(dir_, position);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    for (uint64_t i = 0; i < n; ++i) EXPECT_TRUE(w->Add(Object(i)).ok());
    auto info = w->Finish();
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->records, n);
    return info->path;
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void Spit(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  }

  static Status Read(const std::string& path, uint64_t* count = nullptr) {
    uint64_t n = 0;
    auto info = ReadSnapshot(path, [&](master::LogRecord) {
      ++n;
      return Status::Ok();
    });
    if (count != nullptr) *count = n;
    return info.status();
  }

  std::string dir_;
};

// Three records at log position 0x1234 as a snapshot held them before the
// shared codec (common/coding.h). Such a file still restores, and the writer
// still lays the same records out the same way.
constexpr char kGoldenSnapshot[] =
    "4352534e4150303101000000000000003412000000000000a3cdcc4da2010000550000004c000000"
    "2d222975e6079c3128b52ffd204c6102001203056b65792d3080200001010001000000001c03056b"
    "65792d31812095f8a9fa97b7de9b9e010101010280200000001b03056b65792d328220aaf0d3f4af"
    "eebcb73c0101020380400000004352534e4150454e010000000000000003000000000000004680d8"
    "836c097cf6";

// The raw bytes of a one-block snapshot's block (zstd's compressed form is zstd's).
std::string RawBlock(const std::string& file) {
  const uint32_t comp = DecodeFixed32(file.data() + 32);  // the block header's first two fields
  const uint32_t raw = DecodeFixed32(file.data() + 36);
  std::string out(raw, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), file.data() + 48, comp);
  EXPECT_EQ(n, out.size());
  return out;
}

TEST_F(SnapshotFileTest, AGoldenSnapshotReadsBack) {
  std::vector<master::LogRecord> got;
  auto info =
      DecodeSnapshot(UnhexForTest(kGoldenSnapshot), "golden", [&](const master::LogRecord& r) {
        got.push_back(r);
        return Status::Ok();
      });
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->log_position, 0x1234u);
  EXPECT_EQ(info->blocks, 1u);
  ASSERT_EQ(got.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], Object(i));
}

TEST_F(SnapshotFileTest, TheWriterKeepsTheGoldenLayout) {
  const std::string golden = UnhexForTest(kGoldenSnapshot);
  const std::string now = Slurp(Write(3, 0x1234));
  // The header but its creation time, and the trailer, byte for byte.
  EXPECT_EQ(HexForTest(now.substr(0, 24)), HexForTest(golden.substr(0, 24)));
  ASSERT_GE(now.size(), 80u);
  EXPECT_EQ(HexForTest(now.substr(now.size() - 32)), HexForTest(golden.substr(golden.size() - 32)));
  EXPECT_EQ(HexForTest(RawBlock(now)), HexForTest(RawBlock(golden)));
}

// A whole snapshot at position 1 holding one block of `raw` (record lengths
// and records, as the writer lays them out) with every check right, so that
// only the block's contents can make a reader refuse it.
std::string SnapshotHolding(const std::string& raw, uint64_t records) {
  std::string comp(ZSTD_compressBound(raw.size()), '\0');
  comp.resize(ZSTD_compress(comp.data(), comp.size(), raw.data(), raw.size(), 1));
  std::string out = "CRSNAP01";
  PutFixed32(out, 1);  // version
  PutFixed32(out, 0);
  PutFixed64(out, 1);  // log position
  PutFixed64(out, 0);  // created
  std::string head;
  PutFixed32(head, static_cast<uint32_t>(comp.size()));
  PutFixed32(head, static_cast<uint32_t>(raw.size()));
  PutFixed64(head, XXH3_64bits((head + comp).data(), head.size() + comp.size()));
  std::string trailer = "CRSNAPEN";
  PutFixed64(trailer, 1);  // blocks
  PutFixed64(trailer, records);
  PutFixed64(trailer, XXH3_64bits(trailer.data(), trailer.size()));
  return out + head + comp + trailer;
}

// A record's length must be a varint in its one encoding (common/coding.h).
// The reader before it took a padded length, or one whose tenth byte carried
// bits past 64, for a plain small number.
TEST_F(SnapshotFileTest, AnOverlongRecordLengthIsRefused) {
  const std::string unmount = "\x02\x03";  // segment 3 unmounted
  auto decode = [](const std::string& raw) {
    return DecodeSnapshot(SnapshotHolding(raw, 1), "crafted",
                          [](const master::LogRecord&) { return Status::Ok(); });
  };
  auto good = decode("\x02" + unmount);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->records, 1u);
  for (const char* length : {"8200", "82808080808080808002", "82808080808080808080"}) {
    auto bad = decode(UnhexForTest(length) + unmount);
    EXPECT_EQ(bad.status().code(), ErrorCode::kCorruptData) << length;
    EXPECT_EQ(bad.status().message(), "snapshot 'crafted': block 0: record cut") << length;
  }
}

TEST_F(SnapshotFileTest, RecordsRoundTripAcrossBlocks) {
  constexpr uint64_t kN = 60'000;  // several 1 MiB blocks
  const std::string path = Write(kN, 0x1234);
  EXPECT_EQ(fs::path(path).filename().string(), "snapshot-0000000000001234.crsnap");
  uint64_t i = 0;
  auto info = ReadSnapshot(path, [&](master::LogRecord r) {
    EXPECT_EQ(r, Object(i));
    ++i;
    return Status::Ok();
  });
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(i, kN);
  EXPECT_EQ(info->log_position, 0x1234u);
  EXPECT_GT(info->blocks, 1u);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(SnapshotFileTest, AFlippedByteIsRefusedNamingTheBlock) {
  const std::string path = Write(60'000);
  const std::string good = Slurp(path);
  // A byte inside the second block's data: find it by walking the first block.
  const uint64_t first_comp = static_cast<uint8_t>(good[32]) | static_cast<uint8_t>(good[33]) << 8 |
                              static_cast<uint8_t>(good[34]) << 16 |
                              uint64_t{static_cast<uint8_t>(good[35])} << 24;
  std::string bad = good;
  bad[32 + 16 + first_comp + 16 + 5] ^= 0x40;
  Spit(path, bad);
  uint64_t handed = 0;
  const Status s = Read(path, &handed);
  EXPECT_EQ(s.code(), ErrorCode::kCorruptData);
  EXPECT_NE(s.message().find("block 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_EQ(handed, 0u) << "nothing is handed over from a damaged file";
}

TEST_F(SnapshotFileTest, TruncatedFilesAndBadHeadersAreRefused) {
  const std::string path = Write(1000);
  const std::string good = Slurp(path);
  for (size_t n : {size_t{0}, size_t{10}, size_t{40}, good.size() / 2, good.size() - 1}) {
    Spit(path, good.substr(0, n));
    EXPECT_EQ(Read(path).code(), ErrorCode::kCorruptData) << "cut to " << n;
  }
  std::string other_version = good;
  other_version[8] = 9;
  Spit(path, other_version);
  EXPECT_EQ(Read(path).code(), ErrorCode::kUnsupported);
}

TEST_F(SnapshotFileTest, AnEmptySnapshotIsValid) {
  uint64_t n = 1;
  ASSERT_TRUE(Read(Write(0), &n).ok());
  EXPECT_EQ(n, 0u);
}

TEST_F(SnapshotFileTest, PruneKeepsTheNewest) {
  Write(1, 100);
  Write(1, 300);
  Write(1, 200);
  ASSERT_EQ(ListSnapshots(dir_).size(), 3u);
  auto pruned = PruneSnapshots(dir_, 2);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->oldest_kept, 200u);
  EXPECT_TRUE(pruned->removed_damaged.empty());
  const std::vector<std::string> kept = ListSnapshots(dir_);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_NE(kept[0].find("snapshot-000000000000012c"), std::string::npos);  // 300
}

// Rotation counts only snapshots that read back whole: a damaged newest one
// never takes a whole one's place, and the last whole one is never removed.
TEST_F(SnapshotFileTest, PruneCountsOnlyWholeSnapshots) {
  const std::string good = Write(5, 100);
  const std::string damaged = Write(5, 200);
  std::string bytes = Slurp(damaged);
  bytes[bytes.size() / 2] ^= 0x5a;
  Spit(damaged, bytes);
  ASSERT_EQ(CheckSnapshot(damaged).status().code(), ErrorCode::kCorruptData);
  ASSERT_TRUE(CheckSnapshot(good).ok());

  auto pruned = PruneSnapshots(dir_, 1);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->oldest_kept, 100u) << "the whole one is the one the log must reach back to";
  ASSERT_EQ(pruned->removed_damaged.size(), 1u);
  EXPECT_NE(pruned->removed_damaged[0].find("snapshot-00000000000000c8"), std::string::npos)
      << pruned->removed_damaged[0];
  EXPECT_EQ(ListSnapshots(dir_), std::vector<std::string>{good});

  // A newer whole one arrives: with keep 1 it replaces the older whole one.
  const std::string newer = Write(5, 300);
  pruned = PruneSnapshots(dir_, 1);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->oldest_kept, 300u);
  EXPECT_EQ(ListSnapshots(dir_), std::vector<std::string>{newer});

  // Only damaged ones: none is kept, and nothing pins the log.
  bytes = Slurp(newer);
  bytes[bytes.size() / 2] ^= 0x5a;
  Spit(newer, bytes);
  pruned = PruneSnapshots(dir_, 2);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->oldest_kept, UINT64_MAX);
  EXPECT_TRUE(ListSnapshots(dir_).empty());
}

TEST_F(SnapshotFileTest, AnUnfinishedWriterLeavesNothing) {
  {
    auto w = SnapshotWriter::Create(dir_, 7);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Add(Object(1)).ok());
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace crescent::durability
