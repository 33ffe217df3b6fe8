// FileOperationLog: records survive a reopen in order, files rotate and are
// truncated, a torn tail is cut with a warning, damage elsewhere is refused,
// and WaitDurable under "always" returns only once the record is synced.
#include "durability/file_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/hex_for_test.h"
#include "durability/test_dir_for_test.h"

namespace crescent::durability {
namespace {

namespace fs = std::filesystem;

class FileLogTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("file_log_test"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<FileOperationLog> Open(FileLogOptions o = {}) {
    o.dir = dir_;
    warnings_.clear();
    auto log = FileOperationLog::Open(o, &warnings_);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }

  static std::vector<std::string> ReadAll(FileOperationLog& log, uint64_t from = 0) {
    std::vector<std::string> out;
    Status s = log.ReadFrom(from, [&](uint64_t, std::string_view r) {
      out.emplace_back(r);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  std::vector<fs::path> Files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
  std::vector<std::string> warnings_;
};

// A log file as the log wrote it before the shared codec (common/coding.h):
// its header and two framed records. Such a file still reads back, and the
// same appends write the same bytes.
constexpr char kGoldenLog[] =
    "4352534c4f473031050403020100000005000000743818f866697273740d000000ae0f3c3c736563"
    "6f6e64007265636f7264";

TEST_F(FileLogTest, AFileIsTheGoldenBytes) {
  {
    FileLogOptions o;
    o.start_position = 0x0102030405;
    auto log = Open(o);
    ASSERT_TRUE(log->Append("first").ok());
    ASSERT_TRUE(log->Append(std::string("second\0record", 13)).ok());
  }
  const std::vector<fs::path> files = Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "log-0000000102030405.crlog");
  std::ifstream in(files[0], std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(HexForTest(bytes), kGoldenLog);

  fs::remove_all(dir_);
  fs::create_directories(dir_);
  std::ofstream(files[0], std::ios::binary) << UnhexForTest(kGoldenLog);
  auto log = Open();
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(ReadAll(*log, 0x0102030405),
            (std::vector<std::string>{"first", std::string("second\0record", 13)}));
  EXPECT_EQ(log->end_position(), 0x0102030405u + 2 * FileOperationLog::kFrameBytes + 5 + 13);
}

TEST_F(FileLogTest, RecordsSurviveAReopenInOrder) {
  std::vector<uint64_t> ends;
  {
    auto log = Open();
    for (int i = 0; i < 100; ++i) {
      auto at = log->Append("record-" + std::to_string(i));
      ASSERT_TRUE(at.ok());
      ends.push_back(*at);
    }
    ASSERT_TRUE(log->WaitDurable(ends.back()).ok());
  }
  auto log = Open();
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(log->end_position(), ends.back());
  const std::vector<std::string> all = ReadAll(*log);
  ASSERT_EQ(all.size(), 100u);
  EXPECT_EQ(all[42], "record-42");
  // From a record boundary: the records after it.
  const std::vector<std::string> tail = ReadAll(*log, ends[49]);
  ASSERT_EQ(tail.size(), 50u);
  EXPECT_EQ(tail.front(), "record-50");
  // A position inside a record is refused.
  EXPECT_EQ(
      log->ReadFrom(ends[49] + 1, [](uint64_t, std::string_view) { return Status::Ok(); }).code(),
      ErrorCode::kInvalidArgument);
  // Appends continue after the reopen.
  auto more = log->Append("after");
  ASSERT_TRUE(more.ok());
  EXPECT_GT(*more, ends.back());
  EXPECT_EQ(ReadAll(*log).back(), "after");
}

TEST_F(FileLogTest, FilesRotateAndTruncateBeforeDropsWholeFiles) {
  FileLogOptions o;
  o.file_bytes = 256;
  o.sync_interval_ms = 0;
  auto log = Open(o);
  std::vector<uint64_t> ends;
  for (int i = 0; i < 60; ++i) {
    auto at = log->Append(std::string(40, static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(at.ok());
    ASSERT_TRUE(log->WaitDurable(*at).ok());  // one batch per record, so files rotate
    ends.push_back(*at);
  }
  const size_t files = log->Stats().files;
  EXPECT_GT(files, 5u);
  EXPECT_EQ(ReadAll(*log).size(), 60u);
  ASSERT_TRUE(log->TruncateBefore(ends[39]).ok());
  EXPECT_LT(log->Stats().files, files);
  EXPECT_LE(log->Stats().first_position, ends[39]);
  EXPECT_EQ(ReadAll(*log, ends[39]).size(), 20u);
  // Before the oldest kept record: refused, not silently short.
  EXPECT_EQ(log->ReadFrom(0, [](uint64_t, std::string_view) { return Status::Ok(); }).code(),
            ErrorCode::kCorruptData);
  log.reset();
  auto again = Open(o);
  EXPECT_EQ(ReadAll(*again, ends[39]).size(), 20u);
}

TEST_F(FileLogTest, ATornTailIsCutWithAWarning) {
  uint64_t good_end;
  {
    auto log = Open();
    ASSERT_TRUE(log->Append("one").ok());
    auto at = log->Append("two");
    ASSERT_TRUE(at.ok());
    good_end = *at;
    ASSERT_TRUE(log->Append("three-is-torn").ok());
  }
  const fs::path file = Files().back();
  fs::resize_file(file, fs::file_size(file) - 3);  // the crash cut the last record short
  auto log = Open();
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("torn tail"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find(file.filename().string()), std::string::npos) << warnings_[0];
  EXPECT_EQ(log->end_position(), good_end);
  EXPECT_EQ(ReadAll(*log), (std::vector<std::string>{"one", "two"}));
  // New records follow the good ones.
  ASSERT_TRUE(log->Append("four").ok());
  EXPECT_EQ(ReadAll(*log), (std::vector<std::string>{"one", "two", "four"}));
}

TEST_F(FileLogTest, AFlippedByteInTheNewestFileEndsTheLogThere) {
  {
    auto log = Open();
    ASSERT_TRUE(log->Append("one").ok());
    ASSERT_TRUE(log->Append("two").ok());
  }
  const fs::path file = Files().back();
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(file) - 1));
    f.put('X');
  }
  auto log = Open();
  EXPECT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(ReadAll(*log), (std::vector<std::string>{"one"}));
}

TEST_F(FileLogTest, DamageInAnOlderFileIsRefusedNamingTheFile) {
  FileLogOptions o;
  o.file_bytes = 64;
  o.sync_interval_ms = 0;
  {
    auto log = Open(o);
    for (int i = 0; i < 6; ++i) {
      auto at = log->Append(std::string(40, 'x'));
      ASSERT_TRUE(at.ok());
      ASSERT_TRUE(log->WaitDurable(*at).ok());
    }
  }
  const fs::path first = Files().front();
  {
    std::fstream f(first, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(FileOperationLog::kHeaderBytes + FileOperationLog::kFrameBytes + 1);
    f.put('Y');
  }
  auto log = Open(o);
  EXPECT_TRUE(warnings_.empty());
  const Status s = log->ReadFrom(0, [](uint64_t, std::string_view) { return Status::Ok(); });
  EXPECT_EQ(s.code(), ErrorCode::kCorruptData);
  EXPECT_NE(s.message().find(first.filename().string()), std::string::npos) << s.ToString();
}

TEST_F(FileLogTest, AnEmptyDirStartsAtTheGivenPosition) {
  FileLogOptions o;
  o.start_position = 5000;
  auto log = Open(o);
  EXPECT_EQ(log->end_position(), 5000u);
  auto at = log->Append("x");
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(*at, 5000u + FileOperationLog::kFrameBytes + 1);
  EXPECT_EQ(ReadAll(*log, 5000), (std::vector<std::string>{"x"}));
}

TEST_F(FileLogTest, AlwaysModeReturnsOnlyOnceSyncedAndGroupsCommits) {
  FileLogOptions o;
  o.sync_interval_ms = 0;
  auto log = Open(o);
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  std::atomic<int> violations{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string record = std::to_string(t);
        record += '-';
        record += std::to_string(i);
        auto at = log->Append(record);
        if (!at.ok() || !log->WaitDurable(*at).ok() || log->Stats().synced_position < *at) {
          violations.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(ReadAll(*log).size(), size_t{kThreads * kEach});
  EXPECT_LE(log->Stats().syncs, uint64_t{kThreads * kEach});
}

TEST_F(FileLogTest, IntervalModeSyncsWithoutWaiters) {
  FileLogOptions o;
  o.sync_interval_ms = 1;
  auto log = Open(o);
  auto at = log->Append("x");
  ASSERT_TRUE(at.ok());
  EXPECT_TRUE(log->WaitDurable(*at).ok());  // returns at once
  while (log->Stats().synced_position < *at) std::this_thread::yield();
  SUCCEED();
}

// Under "always", a record nobody waits for (an eviction, a node's timeout)
// reaches stable storage all the same, promptly.
TEST_F(FileLogTest, AlwaysSyncsRecordsNobodyWaitsFor) {
  FileLogOptions o;
  o.sync_interval_ms = 0;
  auto log = Open(o);
  auto at = log->Append("unwaited");
  ASSERT_TRUE(at.ok());
  // No deadline that fails the test on a slow machine: it waits until synced.
  while (log->synced_position() < *at) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(log->Stats().synced_position, *at);
}

// SyncThrough makes a record durable before it returns, whatever the interval.
TEST_F(FileLogTest, SyncThroughSyncsAtOnceUnderAnInterval) {
  FileLogOptions o;
  o.sync_interval_ms = 3'600'000;  // the flusher would not run for an hour
  auto log = Open(o);
  auto at = log->Append("must-be-durable");
  ASSERT_TRUE(at.ok());
  EXPECT_LT(log->synced_position(), *at);
  ASSERT_TRUE(log->SyncThrough(*at).ok());
  EXPECT_GE(log->synced_position(), *at);
  const uint64_t syncs = log->Stats().syncs;
  ASSERT_TRUE(log->SyncThrough(*at).ok());
  EXPECT_EQ(log->Stats().syncs, syncs) << "already durable: no second sync";
}

// SkipTo moves the end forward: records after it are read from the new
// position, and reading across the gap is refused as records missing.
TEST_F(FileLogTest, SkipToGoesOnFromALaterPosition) {
  auto log = Open();
  auto a = log->Append("before");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(log->SkipTo(*a + 1000).ok());
  EXPECT_EQ(log->end_position(), *a + 1000);
  ASSERT_TRUE(log->Append("after").ok());
  log.reset();
  log = Open();
  EXPECT_EQ(ReadAll(*log, *a + 1000), std::vector<std::string>{"after"});
  Status across = log->ReadFrom(0, [](uint64_t, std::string_view) { return Status::Ok(); });
  EXPECT_EQ(across.code(), ErrorCode::kCorruptData) << across.ToString();
}

}  // namespace
}  // namespace crescent::durability
