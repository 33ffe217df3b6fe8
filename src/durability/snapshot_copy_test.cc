// A copy of another master's snapshot (snapshot_copy.h): a whole copy is
// checked and renamed into place; a damaged one, a short one, or a source
// that changed its snapshot mid-copy leaves nothing behind.
#include "durability/snapshot_copy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "durability/test_dir_for_test.h"

namespace crescent::durability {
namespace {

namespace fs = std::filesystem;

class SnapshotCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("snapshot_copy_test");
    auto w = SnapshotWriter::Create(dir_ + "/source", 4242);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (uint64_t i = 0; i < 3000; ++i) {
      master::LogRecord r;
      r.type = master::LogRecordType::kPutEnded;
      r.key = "copy-" + std::to_string(i);
      r.size = 1000 + i;
      r.replicas = {{1, 1, 2, i * 4096}};
      ASSERT_TRUE(w->Add(r).ok());
    }
    auto info = w->Finish();
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    std::ifstream in(info->path, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
    ASSERT_GT(bytes_.size(), 1000u);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Parts of `part` bytes of `data`, named as snapshot `position`.
  static SnapshotPartFn Source(const std::string& data, uint64_t position, size_t part) {
    return [=](uint64_t offset, uint64_t* p, uint64_t* size, std::string* out) {
      *p = position;
      *size = data.size();
      *out = offset >= data.size() ? std::string() : data.substr(offset, part);
      return Status::Ok();
    };
  }
  std::string Dest() const { return dir_ + "/dest"; }
  size_t Files() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(Dest())) ++n;
    return n;
  }

  std::string dir_;
  std::string bytes_;
};

TEST_F(SnapshotCopyTest, AWholeCopyIsCheckedAndNamedByItsPosition) {
  auto copied = CopySnapshot(Dest(), Source(bytes_, 4242, 777));
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->log_position, 4242u);
  EXPECT_EQ(copied->records, 3000u);
  EXPECT_EQ(copied->path, SnapshotPath(Dest(), 4242));
  EXPECT_EQ(ListSnapshots(Dest()), std::vector<std::string>{SnapshotPath(Dest(), 4242)});
  EXPECT_TRUE(CheckSnapshot(copied->path).ok());
}

TEST_F(SnapshotCopyTest, DamageAShortCopyOrAChangedSourceLeavesNothing) {
  std::string damaged = bytes_;
  damaged[damaged.size() / 2] ^= 0x40;
  auto bad = CopySnapshot(Dest(), Source(damaged, 4242, 1 << 20));
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorruptData) << bad.status().ToString();
  EXPECT_EQ(Files(), 0u);
  // The source says more bytes than it gives.
  auto short_copy =
      CopySnapshot(Dest(), [&](uint64_t offset, uint64_t* p, uint64_t* size, std::string* out) {
        *p = 4242;
        *size = bytes_.size() + 10;
        *out = offset >= bytes_.size() ? std::string() : bytes_.substr(offset, 4096);
        return Status::Ok();
      });
  EXPECT_EQ(short_copy.status().code(), ErrorCode::kCorruptData);
  EXPECT_EQ(Files(), 0u);
  // A newer snapshot replaced the one being copied.
  auto changed =
      CopySnapshot(Dest(), [&](uint64_t offset, uint64_t* p, uint64_t* size, std::string* out) {
        *p = offset == 0 ? 4242 : 5000;
        *size = bytes_.size();
        *out = offset >= bytes_.size() ? std::string() : bytes_.substr(offset, 4096);
        return Status::Ok();
      });
  EXPECT_EQ(changed.status().code(), ErrorCode::kCorruptData);
  EXPECT_NE(changed.status().message().find("changed mid-copy"), std::string::npos);
  EXPECT_EQ(Files(), 0u);
  // A source that names another position than the file's header.
  auto misnamed = CopySnapshot(Dest(), Source(bytes_, 9999, 1 << 20));
  EXPECT_EQ(misnamed.status().code(), ErrorCode::kCorruptData);
  EXPECT_EQ(Files(), 0u);
  // A source that fails: its error, nothing left.
  auto failed = CopySnapshot(Dest(), [](uint64_t, uint64_t*, uint64_t*, std::string*) {
    return Status(ErrorCode::kUnavailable, "leader gone");
  });
  EXPECT_EQ(failed.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(Files(), 0u);
}

}  // namespace
}  // namespace crescent::durability
