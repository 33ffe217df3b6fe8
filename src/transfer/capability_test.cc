#include "transfer/capability.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <limits>
#include <string_view>
#include <thread>
#include <vector>

#include "common/hex_for_test.h"
#include "transfer/segment_memory.h"

namespace crescent::transfer {
namespace {

constexpr char kBinding[] = "10.0.0.1:7000;shm=crescent-abc";

CapabilitySigner Signer(std::string secret = "0123456789abcdef-secret") {
  StatusOr<CapabilitySigner> s = CapabilitySigner::Create(std::move(secret));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

TEST(CapabilityTest, SignedCapabilityVerifies) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 4096, 100, AccessOp::kRead, 2000);
  EXPECT_TRUE(signer.Verify(kBinding, cap, AccessOp::kRead, 1000).ok());
}

TEST(CapabilityTest, ForgedTagIsRefused) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 0, 100, AccessOp::kRead, 2000);
  cap.tag[3] ^= 1;
  EXPECT_EQ(signer.Verify(kBinding, cap, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
  // A different secret's signature is a forgery too.
  Capability other =
      Signer("another-secret-of-16+").Sign(kBinding, 7, 0, 100, AccessOp::kRead, 2000);
  EXPECT_EQ(signer.Verify(kBinding, other, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
}

TEST(CapabilityTest, WidenedRangeIsRefused) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 0, 100, AccessOp::kRead, 2000);
  Capability wider = cap;
  wider.length = 101;
  EXPECT_EQ(signer.Verify(kBinding, wider, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
  Capability moved = cap;
  moved.offset = 1;
  EXPECT_EQ(signer.Verify(kBinding, moved, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
  Capability later = cap;
  later.expiry_unix_ms += 1;
  EXPECT_EQ(signer.Verify(kBinding, later, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
}

TEST(CapabilityTest, WrongOpIsRefused) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 0, 100, AccessOp::kRead, 2000);
  EXPECT_EQ(signer.Verify(kBinding, cap, AccessOp::kWrite, 1000).code(),
            ErrorCode::kCapabilityInvalid);
  // Relabelling the op breaks the tag.
  cap.op = AccessOp::kWrite;
  EXPECT_EQ(signer.Verify(kBinding, cap, AccessOp::kWrite, 1000).code(),
            ErrorCode::kCapabilityInvalid);
}

TEST(CapabilityTest, ExpiredIsRefused) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 0, 100, AccessOp::kWrite, 2000);
  EXPECT_EQ(signer.Verify(kBinding, cap, AccessOp::kWrite, 2000).code(), ErrorCode::kLeaseExpired);
  EXPECT_EQ(signer.Verify(kBinding, cap, AccessOp::kWrite, 5000).code(), ErrorCode::kLeaseExpired);
  EXPECT_TRUE(signer.Verify(kBinding, cap, AccessOp::kWrite, 1999).ok());
}

// The refusal says how long ago the capability expired: a difference of up to
// 2^64 - 1 ms, which int64_t cannot hold (found by tests/fuzz/capability_fuzz).
TEST(CapabilityTest, ExpiredLongAgoReportsTheExactAge) {
  CapabilitySigner signer = Signer();
  Capability cap =
      signer.Sign(kBinding, 7, 0, 100, AccessOp::kRead, std::numeric_limits<int64_t>::min());
  Status s = signer.Verify(kBinding, cap, AccessOp::kRead, 1000);
  EXPECT_EQ(s.code(), ErrorCode::kLeaseExpired);
  EXPECT_NE(s.message().find("expired 9223372036854776808 ms ago"), std::string::npos)
      << s.message();
}

TEST(CapabilityTest, DifferentBindingIsRefused) {
  CapabilitySigner signer = Signer();
  Capability cap = signer.Sign(kBinding, 7, 0, 100, AccessOp::kRead, 2000);
  EXPECT_EQ(signer.Verify("10.0.0.2:7000", cap, AccessOp::kRead, 1000).code(),
            ErrorCode::kCapabilityInvalid);
}

// The tag is HMAC-SHA256 under the secret over: the binding's length (4 bytes
// LE), the binding, then segment (4), offset (8), length (8), op (1) and expiry
// (8), all little-endian. Store nodes of another build must agree on it.
std::array<uint8_t, 32> ReferenceTag(const std::string& secret, std::string_view binding,
                                     const Capability& c) {
  std::string msg;
  auto le = [&msg](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) msg.push_back(static_cast<char>(v >> (8 * i)));
  };
  le(binding.size(), 4);
  msg.append(binding);
  le(c.segment, 4);
  le(c.offset, 8);
  le(c.length, 8);
  le(static_cast<uint8_t>(c.op), 1);
  le(static_cast<uint64_t>(c.expiry_unix_ms), 8);
  std::array<uint8_t, 32> out{};
  size_t len = 0;
  EXPECT_NE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret.data(), secret.size(),
                      reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out.data(),
                      out.size(), &len),
            nullptr);
  EXPECT_EQ(len, out.size());
  return out;
}

TEST(CapabilityTest, TagIsHmacSha256OfTheDocumentedEncoding) {
  const std::string secret = "0123456789abcdef-secret";
  CapabilitySigner signer = Signer(secret);
  // Several tags in a row on one thread: each restarts the same keyed state.
  for (uint64_t i = 0; i < 5; ++i) {
    const std::string binding = std::string(kBinding) + std::string(i * 40, 'b');
    Capability cap = signer.Sign(binding, 7 + uint32_t(i), i << 40, 100 + i,
                                 i % 2 ? AccessOp::kWrite : AccessOp::kRead, 2000 + int64_t(i));
    EXPECT_EQ(cap.tag, ReferenceTag(secret, binding, cap)) << "capability " << i;
  }
}

// The tag a known capability carried before the shared codec
// (common/coding.h): masters and store nodes of either build agree on it.
TEST(CapabilityTest, TagIsTheGoldenBytes) {
  CapabilitySigner signer = Signer("0123456789abcdef-golden");
  const Capability cap = signer.Sign("tcp://10.0.0.1:7000#e=5", 0x10203, uint64_t{3} << 40, 1 << 20,
                                     AccessOp::kWrite, 1700000000123);
  EXPECT_EQ(HexForTest(cap.tag.data(), cap.tag.size()),
            "2faebbb5128b7e90018028a9dd9b3e8d087f4d9b750ab50471d4b14bb520c12f");
}

TEST(CapabilityTest, ManySignersInterleavedOnOneThread) {
  // More signers than a thread keeps keyed states for: each one's tags stay its own.
  std::vector<CapabilitySigner> signers;
  std::vector<std::string> secrets;
  for (int i = 0; i < 11; ++i) {
    secrets.push_back("secret-number-" + std::to_string(i) + "-0123456789");
    signers.push_back(Signer(secrets.back()));
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < signers.size(); ++i) {
      Capability cap = signers[i].Sign(kBinding, 1, 64 * i, 64, AccessOp::kRead, 5000 + round);
      EXPECT_EQ(cap.tag, ReferenceTag(secrets[i], kBinding, cap)) << i;
      EXPECT_TRUE(signers[i].Verify(kBinding, cap, AccessOp::kRead, 1000).ok()) << i;
      const size_t j = (i + 1) % signers.size();
      EXPECT_EQ(signers[j].Verify(kBinding, cap, AccessOp::kRead, 1000).code(),
                ErrorCode::kCapabilityInvalid)
          << i << " checked by " << j;
    }
  }
  // A copy shares its original's key.
  CapabilitySigner copy = signers[3];
  Capability cap = signers[3].Sign(kBinding, 2, 0, 8, AccessOp::kWrite, 9000);
  EXPECT_TRUE(copy.Verify(kBinding, cap, AccessOp::kWrite, 1000).ok());
}

TEST(CapabilityTest, ThreadsSignAndVerifyConcurrently) {
  const std::string secret = "0123456789abcdef-secret";
  CapabilitySigner signer = Signer(secret);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < 500; ++i) {
        Capability cap = signer.Sign(kBinding, uint32_t(t), i * 4096, 4096, AccessOp::kRead, 3000);
        if (!signer.Verify(kBinding, cap, AccessOp::kRead, 1000).ok()) ++wrong;
        if (i % 50 == 0 && cap.tag != ReferenceTag(secret, kBinding, cap)) ++wrong;
        cap.offset += 1;
        if (signer.Verify(kBinding, cap, AccessOp::kRead, 1000).ok()) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CapabilityTest, ShortSecretIsRejected) {
  EXPECT_EQ(CapabilitySigner::Create("short").status().code(), ErrorCode::kInvalidArgument);
}

class SecretEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("CRESCENT_SECRET_FILE");
    unsetenv("CRESCENT_SECRET");
  }
  void TearDown() override { SetUp(); }
  std::string WriteFile(const std::string& text) {
    std::string path = ::testing::TempDir() + "crescent_secret_" + std::to_string(getpid());
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(SecretEnvTest, LoadsFromFileAndTrims) {
  std::string path = WriteFile("  file-secret-0123456789\n");
  StatusOr<std::string> s = LoadClusterSecret(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s, "file-secret-0123456789");
  setenv("CRESCENT_SECRET_FILE", path.c_str(), 1);
  s = LoadClusterSecret("");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s, "file-secret-0123456789");
  unlink(path.c_str());
}

TEST_F(SecretEnvTest, LoadsFromEnv) {
  setenv("CRESCENT_SECRET", "env-secret-0123456789", 1);
  StatusOr<std::string> s = LoadClusterSecret("");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s, "env-secret-0123456789");
}

TEST_F(SecretEnvTest, RejectsMissingShortAndUnreadable) {
  EXPECT_EQ(LoadClusterSecret("").status().code(), ErrorCode::kInvalidArgument);
  setenv("CRESCENT_SECRET", "too-short", 1);
  EXPECT_EQ(LoadClusterSecret("").status().code(), ErrorCode::kInvalidArgument);
  std::string path = WriteFile("tiny\n");
  EXPECT_EQ(LoadClusterSecret(path).status().code(), ErrorCode::kInvalidArgument);
  unlink(path.c_str());
  EXPECT_EQ(LoadClusterSecret("/nonexistent/crescent/secret").status().code(), ErrorCode::kIoError);
}

// A wrong path is named for what it is: a directory is not called "too short",
// and /dev/zero is not read forever. A short secret says its length and how
// to make a good one.
TEST_F(SecretEnvTest, SaysWhatIsWrongWithTheFile) {
  StatusOr<std::string> s = LoadClusterSecret(::testing::TempDir());
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("is a directory, not a file"), std::string::npos)
      << s.status().ToString();
  s = LoadClusterSecret("/dev/zero");
  EXPECT_EQ(s.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("larger than 64 KiB"), std::string::npos)
      << s.status().ToString();
  std::string path = WriteFile(" tiny \n");
  s = LoadClusterSecret(path);
  unlink(path.c_str());
  EXPECT_NE(s.status().message().find(path + " holds 4 bytes"), std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().message().find("at least 16 bytes"), std::string::npos);
  EXPECT_NE(s.status().message().find("/dev/urandom"), std::string::npos);
}

TEST(CapabilityTest, RandomSecretsDiffer) {
  std::string a = RandomSecret(), b = RandomSecret();
  EXPECT_GE(a.size(), CapabilitySigner::kMinSecretBytes);
  EXPECT_NE(a, b);
}

// SegmentMemory::Resolve is the gate in front of the segment.
TEST(SegmentMemoryTest, ResolveChecksIdBoundsAndSignature) {
  CapabilitySigner signer = Signer();
  auto seg = SegmentMemory::Create("test", 1 << 20);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  (*seg)->SetBinding(kBinding);
  Capability cap = signer.Sign(kBinding, 7, 4096, 100, AccessOp::kWrite, 2000);
  // Not mounted yet.
  EXPECT_EQ((*seg)->Resolve(cap, AccessOp::kWrite, signer, 1000).status().code(),
            ErrorCode::kSegmentNotFound);
  (*seg)->SetId(7);
  StatusOr<std::byte*> p = (*seg)->Resolve(cap, AccessOp::kWrite, signer, 1000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (*seg)->data() + 4096);
  (*seg)->SetId(8);
  EXPECT_EQ((*seg)->Resolve(cap, AccessOp::kWrite, signer, 1000).status().code(),
            ErrorCode::kSegmentNotFound);
  (*seg)->SetId(7);
  // Signed but past the end, empty, or overflowing offset + length.
  for (auto [off, len] : {std::pair<uint64_t, uint64_t>{(1 << 20) - 10, 11},
                          {0, 0},
                          {UINT64_MAX - 5, 10},
                          {(1 << 20) + 1, 1}}) {
    Capability bad = signer.Sign(kBinding, 7, off, len, AccessOp::kWrite, 2000);
    Status s = (*seg)->Resolve(bad, AccessOp::kWrite, signer, 1000).status();
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << off << "+" << len;
  }
  Capability last = signer.Sign(kBinding, 7, (1 << 20) - 10, 10, AccessOp::kWrite, 2000);
  EXPECT_TRUE((*seg)->Resolve(last, AccessOp::kWrite, signer, 1000).ok());
  EXPECT_EQ((*seg)->Resolve(cap, AccessOp::kRead, signer, 1000).status().code(),
            ErrorCode::kCapabilityInvalid);
  EXPECT_EQ((*seg)->Resolve(cap, AccessOp::kWrite, signer, 3000).status().code(),
            ErrorCode::kLeaseExpired);
}

}  // namespace
}  // namespace crescent::transfer
