#include "transfer/copy_hash.h"

#include <cstring>

#include "common/value_hash.h"
#include "transfer/bulk_copy.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace crescent::transfer {
namespace {

#if defined(__x86_64__)
// XXH3-64 with the default secret and seed 0, long-input path (len > 240),
// as xxhash 0.8's XXH3_hashLong_64b_internal: 64-byte stripes, 16 per
// 1 KiB block, each stripe accumulated with the secret at 8 bytes per stripe,
// the accumulators scrambled after each block with the secret's last 64
// bytes; the last stripe at [len - 64, len) with the secret at 192 - 64 - 7;
// then merged with the secret at 11 and len * PRIME64_1, and avalanched.
// value_hash_test-style checks (copy_hash_test) hold it to XXH3_64bits.
constexpr size_t kStripe = 64;
constexpr size_t kStripesPerBlock = 16;
constexpr size_t kBlock = kStripe * kStripesPerBlock;
constexpr size_t kSecretSize = 192;
constexpr size_t kLongFrom = 241;  // XXH3_MIDSIZE_MAX + 1

alignas(64) constexpr uint8_t kSecret[kSecretSize] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

constexpr uint64_t kPrime32_1 = 0x9E3779B1U;
constexpr uint64_t kPrime32_2 = 0x85EBCA77U;
constexpr uint64_t kPrime32_3 = 0xC2B2AE3DU;
constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime64_3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kPrime64_5 = 0x27D4EB2F165667C5ULL;

uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // little-endian: x86-64 only
}

__extension__ using Uint128 = unsigned __int128;  // GCC and Clang on x86-64

uint64_t Mul128Fold64(uint64_t a, uint64_t b) {
  const Uint128 p = static_cast<Uint128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}

// One half-stripe (32 bytes, 4 lanes) into its accumulator.
__attribute__((target("avx2"))) inline __m256i Accumulate(__m256i acc, __m256i data,
                                                          const uint8_t* secret) {
  const __m256i key = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(secret));
  const __m256i data_key = _mm256_xor_si256(data, key);
  const __m256i data_key_lo = _mm256_shuffle_epi32(data_key, _MM_SHUFFLE(0, 3, 0, 1));
  const __m256i product = _mm256_mul_epu32(data_key, data_key_lo);
  const __m256i data_swap = _mm256_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2));
  return _mm256_add_epi64(product, _mm256_add_epi64(acc, data_swap));
}

__attribute__((target("avx2"))) inline __m256i Scramble(__m256i acc, const uint8_t* secret) {
  const __m256i prime32 = _mm256_set1_epi32(static_cast<int>(kPrime32_1));
  const __m256i key = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(secret));
  const __m256i data_key = _mm256_xor_si256(_mm256_xor_si256(acc, _mm256_srli_epi64(acc, 47)), key);
  const __m256i data_key_hi = _mm256_shuffle_epi32(data_key, _MM_SHUFFLE(0, 3, 0, 1));
  const __m256i lo = _mm256_mul_epu32(data_key, prime32);
  const __m256i hi = _mm256_mul_epu32(data_key_hi, prime32);
  return _mm256_add_epi64(lo, _mm256_slli_epi64(hi, 32));
}

// Copies `stripes` stripes from s to d and accumulates them, the k-th with
// the secret at 8 * k.
template <bool kStream>
__attribute__((target("avx2"))) inline void CopyStripes(std::byte* d, const std::byte* s,
                                                        size_t stripes, __m256i& a0, __m256i& a1) {
  for (size_t k = 0; k < stripes; ++k) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k * kStripe));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k * kStripe + 32));
    auto* out = reinterpret_cast<__m256i*>(d + k * kStripe);
    if constexpr (kStream) {
      _mm256_stream_si256(out, x0);
      _mm256_stream_si256(out + 1, x1);
    } else {
      _mm256_storeu_si256(out, x0);
      _mm256_storeu_si256(out + 1, x1);
    }
    a0 = Accumulate(a0, x0, kSecret + k * 8);
    a1 = Accumulate(a1, x1, kSecret + k * 8 + 32);
  }
}

template <bool kStream>
__attribute__((target("avx2"))) uint64_t CopyAndHashAvx2(std::byte* d, const std::byte* s,
                                                         size_t n) {
  __m256i a0 =
      _mm256_setr_epi64x(static_cast<long long>(kPrime32_3), static_cast<long long>(kPrime64_1),
                         static_cast<long long>(kPrime64_2), static_cast<long long>(kPrime64_3));
  __m256i a1 =
      _mm256_setr_epi64x(static_cast<long long>(kPrime64_4), static_cast<long long>(kPrime32_2),
                         static_cast<long long>(kPrime64_5), static_cast<long long>(kPrime32_1));
  const size_t blocks = (n - 1) / kBlock;
  for (size_t b = 0; b < blocks; ++b) {
    CopyStripes<kStream>(d + b * kBlock, s + b * kBlock, kStripesPerBlock, a0, a1);
    a0 = Scramble(a0, kSecret + kSecretSize - kStripe);
    a1 = Scramble(a1, kSecret + kSecretSize - kStripe + 32);
  }
  const size_t stripes = ((n - 1) - blocks * kBlock) / kStripe;
  CopyStripes<kStream>(d + blocks * kBlock, s + blocks * kBlock, stripes, a0, a1);
  const size_t copied = blocks * kBlock + stripes * kStripe;  // n - 64 <= copied < n
  std::memcpy(d + copied, s + copied, n - copied);
  if constexpr (kStream) _mm_sfence();  // the streamed lines before the read-back and the caller
  // The last stripe, from what was delivered.
  const std::byte* last = d + n - kStripe;
  const uint8_t* last_secret = kSecret + kSecretSize - kStripe - 7;
  a0 = Accumulate(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(last)), last_secret);
  a1 = Accumulate(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(last + 32)),
                  last_secret + 32);
  alignas(32) uint64_t acc[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(acc + 4), a1);
  uint64_t h = static_cast<uint64_t>(n) * kPrime64_1;
  const uint8_t* merge = kSecret + 11;
  for (int i = 0; i < 4; ++i) {
    h += Mul128Fold64(acc[2 * i] ^ Read64(merge + 16 * i),
                      acc[2 * i + 1] ^ Read64(merge + 16 * i + 8));
  }
  h ^= h >> 37;
  h *= 0x165667919E3779F9ULL;
  h ^= h >> 32;
  return h;
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

uint64_t CopyAndHash(void* dst, const void* src, size_t n) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
#if defined(__x86_64__)
  if (n >= kLongFrom && HasAvx2()) {
    const bool stream = n >= kStreamingFrom && (reinterpret_cast<uintptr_t>(d) & 31) == 0;
    return stream ? CopyAndHashAvx2<true>(d, s, n) : CopyAndHashAvx2<false>(d, s, n);
  }
#endif
  ValueHasher hasher;
  CopyHashing(d, s, n, hasher);
  return hasher.Digest();
}

}  // namespace crescent::transfer
