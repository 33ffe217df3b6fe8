// Client zero-copy API: PutFrom/GetInto and their batch forms move bytes only
// between registered buffers and the store, over both transports. Ranges outside
// a registered buffer, too-small buffers and malformed batches are refused
// before any byte moves.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "client/client_test_util.h"

namespace crescent {
namespace {

using client_test::Bytes;
using client_test::ClientClusterTest;
using client_test::Pattern;
using client_test::Present;

class ClientZeroCopyTest : public ClientClusterTest {
 protected:
  void SetUp() override {
    ClientClusterTest::SetUp();
    arena_.assign(kArena, std::byte{0});
    ASSERT_TRUE(client_->RegisterBuffer(arena_.data(), arena_.size()).ok());
  }
  void TearDown() override {
    if (client_) {
      EXPECT_TRUE(client_->UnregisterBuffer(arena_.data()).ok());
    }
    ClientClusterTest::TearDown();
  }

  static constexpr size_t kArena = size_t{2} << 20;
  std::vector<std::byte> arena_;
};

TEST_P(ClientZeroCopyTest, PutFromAndGetIntoInsideRegisteredBuffer) {
  std::vector<std::byte> value = Pattern(size_t{1} << 20, 21);
  std::memcpy(arena_.data(), value.data(), value.size());
  ASSERT_TRUE(client_->PutFrom("zc", arena_.data(), value.size()).ok());

  // Read into the second half of the same registered buffer.
  std::byte* dst = arena_.data() + (size_t{1} << 20);
  StatusOr<size_t> n = client_->GetInto("zc", dst, size_t{1} << 20);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, value.size());
  EXPECT_EQ(std::memcmp(dst, value.data(), value.size()), 0);

  // The copying API sees the same bytes.
  StatusOr<std::vector<std::byte>> got = client_->Get("zc");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == value);
}

// A capacity larger than the object is fine; only the object's bytes are written.
TEST_P(ClientZeroCopyTest, GetIntoLargerBufferWritesOnlyTheObject) {
  std::vector<std::byte> value = Pattern(100, 22);
  ASSERT_TRUE(client_->Put("small", Bytes(value)).ok());
  std::memset(arena_.data(), 0xAB, 200);
  StatusOr<size_t> n = client_->GetInto("small", arena_.data(), 200);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 100u);
  EXPECT_EQ(std::memcmp(arena_.data(), value.data(), 100), 0);
  for (size_t i = 100; i < 200; ++i) ASSERT_EQ(arena_[i], std::byte{0xAB}) << i;
}

TEST_P(ClientZeroCopyTest, OutsideRegisteredBufferIsRefused) {
  std::vector<std::byte> other = Pattern(64, 23);
  Status put = client_->PutFrom("unreg", other.data(), other.size());
  EXPECT_EQ(put.code(), ErrorCode::kBufferNotRegistered) << put.ToString();
  EXPECT_FALSE(*client_->Exists("unreg"));  // refused before PutStart

  // A range that starts inside but runs past the end is outside too.
  Status straddle = client_->PutFrom("straddle", arena_.data() + kArena - 10, 20);
  EXPECT_EQ(straddle.code(), ErrorCode::kBufferNotRegistered);

  ASSERT_TRUE(client_->Put("reg", Bytes(other)).ok());
  std::vector<std::byte> out(64);
  StatusOr<size_t> n = client_->GetInto("reg", out.data(), out.size());
  EXPECT_EQ(n.status().code(), ErrorCode::kBufferNotRegistered) << n.status().ToString();

  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->pending_puts, 0u);
}

TEST_P(ClientZeroCopyTest, OverlappingRegistrationIsRefused) {
  EXPECT_EQ(client_->RegisterBuffer(arena_.data() + 100, 10).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->RegisterBuffer(arena_.data(), kArena).code(), ErrorCode::kInvalidArgument);
  // Adjacent but disjoint is fine.
  std::vector<std::byte> two(256);
  ASSERT_TRUE(client_->RegisterBuffer(two.data(), 128).ok());
  EXPECT_TRUE(client_->RegisterBuffer(two.data() + 128, 128).ok());
  EXPECT_TRUE(client_->UnregisterBuffer(two.data()).ok());
  EXPECT_TRUE(client_->UnregisterBuffer(two.data() + 128).ok());
  EXPECT_EQ(client_->UnregisterBuffer(two.data()).code(), ErrorCode::kBufferNotRegistered);
}

// After UnregisterBuffer, the same memory is no longer accepted.
TEST_P(ClientZeroCopyTest, UnregisteredBufferIsRefusedAgain) {
  std::vector<std::byte> buf = Pattern(32, 24);
  ASSERT_TRUE(client_->RegisterBuffer(buf.data(), buf.size()).ok());
  ASSERT_TRUE(client_->PutFrom("u1", buf.data(), buf.size()).ok());
  ASSERT_TRUE(client_->UnregisterBuffer(buf.data()).ok());
  EXPECT_EQ(client_->PutFrom("u2", buf.data(), buf.size()).code(), ErrorCode::kBufferNotRegistered);
}

TEST_P(ClientZeroCopyTest, GetIntoTooSmallNamesTheNeededSize) {
  ASSERT_TRUE(client_->Put("big", Bytes(Pattern(5000, 25))).ok());
  StatusOr<size_t> n = client_->GetInto("big", arena_.data(), 4999);
  ASSERT_EQ(n.status().code(), ErrorCode::kBufferTooSmall) << n.status().ToString();
  EXPECT_NE(n.status().message().find("5000"), std::string::npos) << n.status().message();
}

TEST_P(ClientZeroCopyTest, BatchFormsPerKey) {
  std::vector<std::byte> a = Pattern(3000, 26), b = Pattern(5, 27);
  std::memcpy(arena_.data(), a.data(), a.size());
  std::memcpy(arena_.data() + 4096, b.data(), b.size());
  std::vector<std::byte> unregistered(16);
  std::vector<std::string> keys = {"p0", "p1", "p2"};
  std::vector<void*> ptrs = {arena_.data(), unregistered.data(), arena_.data() + 4096};
  std::vector<size_t> sizes = {a.size(), unregistered.size(), b.size()};
  std::vector<Status> put = client_->BatchPutFrom(keys, ptrs, sizes);
  ASSERT_EQ(put.size(), 3u);
  EXPECT_TRUE(put[0].ok()) << put[0].ToString();
  EXPECT_EQ(put[1].code(), ErrorCode::kBufferNotRegistered);
  EXPECT_TRUE(put[2].ok()) << put[2].ToString();

  std::byte* base = arena_.data() + (size_t{1} << 20);
  std::vector<std::string> get_keys = {"p2", "p1", "p0", "p0"};
  std::vector<void*> dst = {base, base + 16, base + 4096, base + 8192};
  std::vector<size_t> caps = {16, 16, 4096, 100};  // last one too small
  auto got = client_->BatchGetInto(get_keys, dst, caps);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_TRUE(got[0].ok());
  EXPECT_EQ(*got[0], b.size());
  EXPECT_EQ(std::memcmp(base, b.data(), b.size()), 0);
  EXPECT_EQ(got[1].status().code(), ErrorCode::kObjectNotFound);
  ASSERT_TRUE(got[2].ok());
  EXPECT_EQ(std::memcmp(base + 4096, a.data(), a.size()), 0);
  EXPECT_EQ(got[3].status().code(), ErrorCode::kBufferTooSmall);
  EXPECT_NE(got[3].status().message().find("3000"), std::string::npos);
}

// A chain whose page is refused locally must not be stored with a hole in it.
TEST_P(ClientZeroCopyTest, ChainBatchPutFromWithRefusedPageStoresNothing) {
  std::vector<std::byte> unregistered(16);
  std::vector<std::string> keys = {"c0", "c1"};
  std::vector<void*> ptrs = {arena_.data(), unregistered.data()};
  std::vector<size_t> sizes = {16, 16};
  std::vector<Status> put = client_->BatchPutFrom(keys, ptrs, sizes, {}, /*chain=*/true);
  EXPECT_FALSE(put[0].ok());
  EXPECT_EQ(put[1].code(), ErrorCode::kBufferNotRegistered);
  EXPECT_EQ(Present(client_->BatchExists(keys)), (std::vector<int>{0, 0}));
}

TEST_P(ClientZeroCopyTest, MismatchedSpanLengthsAreInvalid) {
  std::vector<std::string> keys = {"m0", "m1"};
  std::vector<void*> one_ptr = {arena_.data()};
  std::vector<void*> two_ptrs = {arena_.data(), arena_.data() + 64};
  std::vector<size_t> one_size = {64};
  std::vector<size_t> two_sizes = {64, 64};

  for (const Status& s : client_->BatchPutFrom(keys, one_ptr, two_sizes)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  }
  for (const Status& s : client_->BatchPutFrom(keys, two_ptrs, one_size)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  }
  ASSERT_TRUE(client_->Put("m0", Bytes(Pattern(8, 28))).ok());
  auto got = client_->BatchGetInto(keys, one_ptr, two_sizes);
  ASSERT_EQ(got.size(), 2u);
  for (const auto& r : got) EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  got = client_->BatchGetInto(keys, two_ptrs, one_size);
  for (const auto& r : got) EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(*client_->Exists("m1"));
}

// Memory a get cannot write (a PROT_READ mapping, as a read-only memmap) is
// refused as a destination with INVALID_ARGUMENT on both transports: a get
// into it used to fault inside the shared-memory copy, or fail as UNAVAILABLE
// (EFAULT from recv) over TCP. It may still be a put's source.
TEST_P(ClientZeroCopyTest, ReadOnlyMemoryIsNeverADestination) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* ro = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(client_->RegisterBuffer(ro, page).code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(client_->RegisterBuffer(ro, page, BufferAccess::kReadOnly).ok());
  ASSERT_TRUE(client_->PutFrom("ro", ro, page).ok());
  StatusOr<size_t> n = client_->GetInto("ro", ro, page);
  EXPECT_EQ(n.status().code(), ErrorCode::kInvalidArgument) << n.status().ToString();
  EXPECT_NE(n.status().message().find("read-only"), std::string::npos) << n.status().message();
  std::vector<std::string> keys = {"ro"};
  std::vector<void*> ptrs = {ro};
  std::vector<size_t> caps = {page};
  EXPECT_EQ(client_->BatchGetInto(keys, ptrs, caps)[0].status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_->GetPrefixInto(keys, ptrs, caps).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(client_->UnregisterBuffer(ro).ok());
  munmap(ro, page);
}

// Multi-buffer: a value put from 64 slices (a layer-first page: 32 layers,
// K and V) lands as their bytes joined, and reads back into other slices
// (the last one in part); the checksum recorded at the put is the joined
// bytes', so a copying Get verifies it. Slices outside a registered buffer,
// empty ones, and slices too small for the value are refused per key.
TEST_P(ClientZeroCopyTest, MultiBufferPutsAndGetsMoveSlicesInOrder) {
  constexpr size_t kSlices = 64, kSlice = 4000;
  std::vector<std::byte> whole = Pattern(kSlices * kSlice, 5);
  std::vector<MemorySlice> out, in;
  for (size_t j = 0; j < kSlices; ++j) {  // every other 8000 bytes of the arena
    std::byte* at = arena_.data() + j * 2 * kSlice;
    std::memcpy(at, whole.data() + j * kSlice, kSlice);
    out.push_back({at, kSlice});
  }
  std::byte* dst = arena_.data() + (size_t{1} << 20);
  in.push_back({dst, 1000});
  in.push_back({dst + 2000, whole.size()});  // holds the rest and more
  const std::vector<std::string> keys = {"mb/0", "mb/bad"};
  std::vector<std::byte> outside(100);
  const std::vector<std::vector<MemorySlice>> puts = {out, {{outside.data(), outside.size()}}};
  std::vector<Status> put = client_->BatchPutFromSlices(keys, puts);
  ASSERT_TRUE(put[0].ok()) << put[0].ToString();
  EXPECT_EQ(put[1].code(), ErrorCode::kBufferNotRegistered) << put[1].ToString();
  StatusOr<std::vector<std::byte>> copied = client_->Get("mb/0");
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_TRUE(*copied == whole);
  const std::vector<std::string> one = {"mb/0"};
  std::vector<StatusOr<size_t>> got =
      client_->BatchGetIntoSlices(one, std::vector<std::vector<MemorySlice>>{in});
  ASSERT_TRUE(got[0].ok()) << got[0].status().ToString();
  EXPECT_EQ(*got[0], whole.size());
  EXPECT_EQ(std::memcmp(dst, whole.data(), 1000), 0);
  EXPECT_EQ(std::memcmp(dst + 2000, whole.data() + 1000, whole.size() - 1000), 0);
  // Too small together; an empty slice.
  got = client_->BatchGetIntoSlices(
      one, std::vector<std::vector<MemorySlice>>{{{dst, 1000}, {dst + 2000, 1000}}});
  EXPECT_EQ(got[0].status().code(), ErrorCode::kBufferTooSmall);
  got = client_->BatchGetIntoSlices(one, std::vector<std::vector<MemorySlice>>{{{dst, 0}, in[1]}});
  EXPECT_EQ(got[0].status().code(), ErrorCode::kInvalidSize);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientZeroCopyTest, ::testing::Bool(),
                         client_test::TransportName);

}  // namespace
}  // namespace crescent
