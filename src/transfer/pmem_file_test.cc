#include "transfer/pmem_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "transfer/segment_memory.h"

namespace crescent::transfer {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kSize = PmemFile::kMinFileBytes + 64 * 4096;

class PmemFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pmem-file-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name = "seg") const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(PmemFileTest, ANewFileGetsAHeaderAndItsBytesSurviveAReopen) {
  std::string uuid;
  {
    auto f = PmemFile::Open(Path(), kSize);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE((*f)->created());
    EXPECT_EQ((*f)->data_size(), kSize - PmemFile::kHeaderBytes);
    EXPECT_EQ((*f)->uuid().size(), 32u);
    uuid = (*f)->uuid();
    std::memcpy((*f)->data() + 12345, "persisted", 9);
    (*f)->Persist((*f)->data() + 12345, 9);
  }
  EXPECT_EQ(fs::file_size(Path()), kSize);
  auto again = PmemFile::Open(Path(), kSize);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE((*again)->created());
  EXPECT_EQ((*again)->uuid(), uuid);
  EXPECT_EQ(std::memcmp((*again)->data() + 12345, "persisted", 9), 0);
}

TEST_F(PmemFileTest, TwoFilesGetDifferentIdentities) {
  auto a = PmemFile::Open(Path("a"), kSize);
  auto b = PmemFile::Open(Path("b"), kSize);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->uuid(), (*b)->uuid());
}

TEST_F(PmemFileTest, ACopyHasTheSameUuidButAnotherFileIdentity) {
  uint64_t identity = 0;
  std::string uuid;
  {
    auto a = PmemFile::Open(Path("a"), kSize);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    identity = (*a)->file_identity();
    uuid = (*a)->uuid();
    EXPECT_NE(identity, 0u);
    fs::copy_file(Path("a"), Path("b"));
  }
  auto again = PmemFile::Open(Path("a"), kSize);
  auto copy = PmemFile::Open(Path("b"), kSize);
  ASSERT_TRUE(again.ok() && copy.ok());
  EXPECT_EQ((*again)->file_identity(), identity);
  EXPECT_EQ((*copy)->uuid(), uuid);
  EXPECT_NE((*copy)->file_identity(), identity);
}

TEST_F(PmemFileTest, TheReadOnlyFdMapsTheSameBytesAndCannotBeMappedWritable) {
  auto f = PmemFile::Open(Path(), kSize);
  ASSERT_TRUE(f.ok());
  std::memcpy((*f)->data(), "shared", 6);
  void* w = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, (*f)->read_fd(), 0);
  EXPECT_EQ(w, MAP_FAILED);
  void* r = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, (*f)->read_fd(), 0);
  ASSERT_NE(r, MAP_FAILED);
  EXPECT_EQ(std::memcmp(r, "shared", 6), 0);
  munmap(r, 4096);
}

TEST_F(PmemFileTest, AFileHeldByAnotherUserIsRefused) {
  auto first = PmemFile::Open(Path(), kSize);
  ASSERT_TRUE(first.ok());
  auto second = PmemFile::Open(Path(), kSize);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(second.status().message().find("held by another process"), std::string::npos);
  first->reset();  // released with the file
  EXPECT_TRUE(PmemFile::Open(Path(), kSize).ok());
}

TEST_F(PmemFileTest, AnotherSizeIsRefusedAndTheFileKept) {
  ASSERT_TRUE(PmemFile::Open(Path(), kSize).ok());
  auto bigger = PmemFile::Open(Path(), kSize + 4096);
  ASSERT_FALSE(bigger.ok());
  EXPECT_EQ(bigger.status().code(), ErrorCode::kInvalidSize);
  EXPECT_NE(bigger.status().message().find(Path()), std::string::npos);
  EXPECT_EQ(fs::file_size(Path()), kSize);
}

TEST_F(PmemFileTest, ABadSizeIsRefused) {
  EXPECT_EQ(PmemFile::Open(Path(), kSize + 1).status().code(), ErrorCode::kInvalidSize);
  EXPECT_EQ(PmemFile::Open(Path(), 4096).status().code(), ErrorCode::kInvalidSize);
}

TEST_F(PmemFileTest, AForeignFileIsRefusedUntouched) {
  {
    std::ofstream out(Path(), std::ios::binary);
    std::string junk(kSize, 'x');
    out.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto f = PmemFile::Open(Path(), kSize);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kCorruptData);
  EXPECT_NE(f.status().message().find("foreign"), std::string::npos);
  std::ifstream in(Path(), std::ios::binary);
  char c = 0;
  in.seekg(static_cast<std::streamoff>(kSize - 1));
  in.get(c);
  EXPECT_EQ(c, 'x');
}

TEST_F(PmemFileTest, ADamagedHeaderIsRefused) {
  ASSERT_TRUE(PmemFile::Open(Path(), kSize).ok());
  {
    // One byte of the UUID, in the header at the end of the file.
    std::fstream io(Path(), std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(static_cast<std::streamoff>(kSize - PmemFile::kHeaderBytes + 40));
    io.put('\x5a');
  }
  auto f = PmemFile::Open(Path(), kSize);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kCorruptData);
  EXPECT_NE(f.status().message().find("checksum"), std::string::npos);
}

TEST(PmemHeader, RoundTripsAndRefusesAnotherVersion) {
  PmemHeader h;
  h.data_size = 1 << 20;
  h.uuid[0] = 7;
  h.created_unix_ms = 42;
  std::vector<std::byte> buf(PmemFile::kHeaderBytes);
  EncodePmemHeader(h, buf.data());
  auto back = DecodePmemHeader(buf.data());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data_size, h.data_size);
  EXPECT_EQ(back->uuid, h.uuid);
  EXPECT_EQ(back->created_unix_ms, 42);
  buf[16] = std::byte{9};  // the version
  EXPECT_NE(DecodePmemHeader(buf.data()).status().message().find("version"), std::string::npos);
}

TEST_F(PmemFileTest, AnUnwritablePathIsRefused) {
  auto f = PmemFile::Open((dir_ / "missing-dir" / "seg").string(), kSize);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kIoError);
  EXPECT_NE(f.status().message().find("missing-dir"), std::string::npos);
  auto d = PmemFile::Open(dir_.string(), kSize);  // a directory
  EXPECT_FALSE(d.ok());
}

TEST_F(PmemFileTest, AFullFileSystemIsRefusedAtOpen) {
  // A 1 MiB tmpfs of its own (root only: the test is skipped otherwise).
  const fs::path small = dir_ / "small";
  fs::create_directories(small);
  if (geteuid() != 0 || mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  }
  auto f = PmemFile::Open((small / "seg").string(), 8 * PmemFile::kMinFileBytes);
  umount(small.c_str());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kNoSpace);
}

TEST_F(PmemFileTest, APersistentSegmentServesItsFileThroughSegmentMemory) {
  auto seg = SegmentMemory::OpenPersistent(Path(), kSize);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  ASSERT_NE((*seg)->persistent(), nullptr);
  EXPECT_EQ((*seg)->size(), kSize - PmemFile::kHeaderBytes);
  EXPECT_EQ((*seg)->fd(), (*seg)->persistent()->read_fd());
  std::memcpy((*seg)->data() + 100, "abc", 3);
  (*seg)->Persist((*seg)->data() + 100, 3);
  seg->reset();
  auto again = SegmentMemory::OpenPersistent(Path(), kSize);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::memcmp((*again)->data() + 100, "abc", 3), 0);
}

}  // namespace
}  // namespace crescent::transfer
