#include "transfer/segment_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "common/host_memory.h"

namespace crescent::transfer {
namespace {

constexpr char kBinding[] = "127.0.0.1:1;shm=seg-test";

class SegmentMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto seg = SegmentMemory::Create("seg-test", 4096);
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    segment_ = std::move(*seg);
    segment_->SetBinding(kBinding);
    segment_->SetId(7);
    auto signer = CapabilitySigner::Create("0123456789abcdef-secret");
    ASSERT_TRUE(signer.ok());
    signer_.emplace(std::move(*signer));
  }

  Capability Sign(uint32_t id, uint64_t offset, uint64_t length, AccessOp op = AccessOp::kRead) {
    return signer_->Sign(kBinding, id, offset, length, op, UnixNowMs() + 60'000);
  }
  Status Resolve(const Capability& cap, AccessOp op = AccessOp::kRead) {
    return segment_->Resolve(cap, op, *signer_, UnixNowMs()).status();
  }

  std::unique_ptr<SegmentMemory> segment_;
  std::optional<CapabilitySigner> signer_;
};

TEST_F(SegmentMemoryTest, CreateMapsZeroedMemoryOfTheRequestedSize) {
  EXPECT_EQ(segment_->size(), 4096u);
  EXPECT_GE(segment_->fd(), 0);
  for (uint64_t i = 0; i < segment_->size(); ++i) ASSERT_EQ(segment_->data()[i], std::byte{0});
}

// The memfd that same-host clients receive maps only read-only, and cannot be
// resized under the node's own mapping.
TEST_F(SegmentMemoryTest, TheFdIsSealedAgainstWritableMappingsAndResizing) {
  void* w = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, segment_->fd(), 0);
  EXPECT_EQ(w, MAP_FAILED);
  if (w != MAP_FAILED) munmap(w, 4096);
  void* r = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, segment_->fd(), 0);
  ASSERT_NE(r, MAP_FAILED);
  segment_->data()[5] = std::byte{42};  // the node's own mapping stays writable
  EXPECT_EQ(static_cast<const std::byte*>(r)[5], std::byte{42});
  EXPECT_NE(mprotect(r, 4096, PROT_READ | PROT_WRITE), 0);
  munmap(r, 4096);
  EXPECT_NE(ftruncate(segment_->fd(), 0), 0);
}

// Capabilities are bound to the mount: a remount under the same id with a new
// binding (a new epoch) refuses the earlier mount's capabilities.
TEST_F(SegmentMemoryTest, ARemountRefusesCapabilitiesOfTheEarlierMount) {
  Capability old = Sign(7, 0, 64);
  SegmentMemory::Fence fence;
  ASSERT_TRUE(segment_->Resolve(old, AccessOp::kRead, *signer_, UnixNowMs(), &fence).ok());
  EXPECT_TRUE(fence.Holds());
  segment_->SetMount(7, std::string(kBinding) + ";epoch=9");
  EXPECT_FALSE(fence.Holds()) << "a transfer in flight must stop at the next chunk";
  EXPECT_EQ(Resolve(old).code(), ErrorCode::kCapabilityInvalid);
  Capability fresh =
      signer_->Sign(segment_->binding(), 7, 0, 64, AccessOp::kRead, UnixNowMs() + 60'000);
  EXPECT_TRUE(Resolve(fresh).ok());
  segment_->SetMount(0, segment_->binding());
  EXPECT_EQ(Resolve(fresh).code(), ErrorCode::kSegmentNotFound);
}

TEST_F(SegmentMemoryTest, ZeroSizeIsRefused) {
  EXPECT_FALSE(SegmentMemory::Create("zero", 0).ok());
}

// A field of this machine's /proc/meminfo in bytes (0 when absent).
uint64_t MeminfoBytes(const std::string& name) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return std::stoull(line.substr(name.size() + 1)) * 1024;
  }
  return 0;
}

TEST_F(SegmentMemoryTest, MoreThanTheHostHasIsRefusedBeforeAllocating) {
  const uint64_t total = MeminfoBytes("MemTotal") + MeminfoBytes("SwapTotal");
  ASSERT_GT(total, 0u);
  const uint64_t size = 2 * total;
  // Safety belt: were the check missing, the memfd would be filled until the OOM
  // killer struck this host. With RLIMIT_FSIZE below `size`, ftruncate/fallocate
  // fail with EFBIG instead (SIGXFSZ ignored), and the message check fails the test.
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit belt = old_limit;
  belt.rlim_cur = std::min<rlim_t>(old_limit.rlim_cur, rlim_t{1} << 30);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &belt), 0);
  auto seg = SegmentMemory::Create("too-big", size);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(seg.ok());
  EXPECT_EQ(seg.status().code(), ErrorCode::kNoSpace);
  const std::string& msg = seg.status().message();
  EXPECT_NE(msg.find(std::to_string(size) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("available"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MemAvailable"), std::string::npos) << msg;
  // And a segment that fits is still created (SetUp made one of 4 KiB).
  EXPECT_TRUE(SegmentMemory::Create("fits", 1 << 20).ok());
}

TEST(AvailableMemory, ReadsMemAvailablePlusSwapFree) {
  auto a = ParseMeminfoAvailable(
      "MemTotal:       24683620 kB\nMemFree:        20000000 kB\n"
      "MemAvailable:   23916324 kB\nSwapTotal:       2097148 kB\nSwapFree:        1000000 kB\n");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes, (uint64_t{23916324} + 1000000) * 1024);
  EXPECT_NE(a->detail.find("MemAvailable"), std::string::npos) << a->detail;
  // Without MemAvailable (old kernels) MemFree stands in; no swap lines: no swap.
  auto old_kernel = ParseMeminfoAvailable("MemTotal: 100 kB\nMemFree:   40 kB\n");
  ASSERT_TRUE(old_kernel.has_value());
  EXPECT_EQ(old_kernel->bytes, 40u * 1024);
  EXPECT_FALSE(ParseMeminfoAvailable("").has_value());
  EXPECT_FALSE(ParseMeminfoAvailable("MemAvailableX: 5 kB\nSwapFree: 1 kB\n").has_value());
  // This machine's figure is readable and positive.
  auto here = AvailableSegmentMemory();
  ASSERT_TRUE(here.has_value());
  EXPECT_GT(here->bytes, 0u);
}

TEST(AvailableMemory, CgroupV2LimitIsTheSmallestOnThePathToTheRoot) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("segment-memory-cgroup-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "a" / "b" / "c");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  // Not a v2 hierarchy (no cgroup.controllers): no limit, whatever memory.max says.
  write(root / "a" / "b" / "memory.max", "1073741824\n");
  EXPECT_FALSE(CgroupMemoryMax(root.string(), "0::/a/b/c\n").has_value());
  write(root / "cgroup.controllers", "cpu memory\n");
  write(root / "a" / "memory.max", "max\n");
  write(root / "a" / "b" / "c" / "memory.max", "2147483648\n");
  auto limit = CgroupMemoryMax(root.string(), "12:memory:/ignored\n0::/a/b/c\n");
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->bytes, uint64_t{1} << 30);
  EXPECT_EQ(limit->path, "/a/b");
  EXPECT_FALSE(CgroupMemoryMax(root.string(), "0::/a\n").has_value());  // "max": no limit
  EXPECT_FALSE(CgroupMemoryMax(root.string(), "0::/\n").has_value());
  EXPECT_FALSE(CgroupMemoryMax(root.string(), "4:memory:/a/b\n").has_value());  // v1 only
  fs::remove_all(root);
}

TEST_F(SegmentMemoryTest, GoodCapabilityResolvesToTheRange) {
  auto p = segment_->Resolve(Sign(7, 100, 50), AccessOp::kRead, *signer_, UnixNowMs());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, segment_->data() + 100);
  auto whole = segment_->Resolve(Sign(7, 0, 4096, AccessOp::kWrite), AccessOp::kWrite, *signer_,
                                 UnixNowMs());
  EXPECT_TRUE(whole.ok());
}

TEST_F(SegmentMemoryTest, UnmountedSegmentRefusesEverything) {
  segment_->SetId(0);
  EXPECT_EQ(Resolve(Sign(0, 0, 1)).code(), ErrorCode::kSegmentNotFound);
  EXPECT_EQ(Resolve(Sign(7, 0, 1)).code(), ErrorCode::kSegmentNotFound);
}

TEST_F(SegmentMemoryTest, WrongIdIsSegmentNotFound) {
  EXPECT_EQ(Resolve(Sign(8, 0, 1)).code(), ErrorCode::kSegmentNotFound);
}

TEST_F(SegmentMemoryTest, OutOfBoundsIsInvalidArgument) {
  EXPECT_EQ(Resolve(Sign(7, 4096, 1)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Resolve(Sign(7, 4000, 97)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Resolve(Sign(7, 0, 4097)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Resolve(Sign(7, 10, 0)).code(), ErrorCode::kInvalidArgument);
  Status s = Resolve(Sign(7, 4000, 97));
  EXPECT_NE(s.message().find("4096"), std::string::npos) << s.message();
}

TEST_F(SegmentMemoryTest, OffsetPlusLengthOverflowIsCaught) {
  // offset + length wraps to a small number; a naive check would accept it.
  EXPECT_EQ(Resolve(Sign(7, UINT64_MAX - 10, 20)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Resolve(Sign(7, 16, UINT64_MAX - 8)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Resolve(Sign(7, UINT64_MAX, UINT64_MAX)).code(), ErrorCode::kInvalidArgument);
}

TEST_F(SegmentMemoryTest, SignatureOpAndExpiryAreChecked) {
  Capability forged = Sign(7, 0, 16);
  forged.length = 32;  // widened after signing
  EXPECT_EQ(Resolve(forged).code(), ErrorCode::kCapabilityInvalid);
  EXPECT_EQ(Resolve(Sign(7, 0, 16, AccessOp::kRead), AccessOp::kWrite).code(),
            ErrorCode::kCapabilityInvalid);
  Capability expired = signer_->Sign(kBinding, 7, 0, 16, AccessOp::kRead, UnixNowMs() - 1);
  EXPECT_EQ(Resolve(expired).code(), ErrorCode::kLeaseExpired);
  // Bound to the binding: a capability for another node does not verify here.
  Capability other = signer_->Sign("10.0.0.1:1", 7, 0, 16, AccessOp::kRead, UnixNowMs() + 60'000);
  EXPECT_EQ(Resolve(other).code(), ErrorCode::kCapabilityInvalid);
}

}  // namespace
}  // namespace crescent::transfer
