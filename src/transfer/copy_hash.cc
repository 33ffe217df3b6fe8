#include "transfer/copy_hash.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "common/value_hash.h"
#include "transfer/bulk_copy.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace crescent::transfer {
namespace {

// XXH3-64 with the default secret and seed 0, long-input path (len > 240),
// as xxhash 0.8's XXH3_hashLong_64b_internal: 64-byte stripes, 16 per
// 1 KiB block, each stripe accumulated with the secret at 8 bytes per stripe,
// the accumulators scrambled after each block with the secret's last 64
// bytes; the last stripe at [len - 64, len) with the secret at 192 - 64 - 7;
// then merged with the secret at 11 and len * PRIME64_1, and avalanched.
// copy_hash_test holds it to XXH3_64bits (HashValue).
constexpr size_t kStripe = 64;
constexpr size_t kStripesPerBlock = 16;
constexpr size_t kSecretSize = 192;
constexpr size_t kMidSizeMax = 240;  // XXH3_MIDSIZE_MAX: longer inputs take the long path

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
constexpr const uint8_t* kScrambleSecret = kSecret + kSecretSize - kStripe;
constexpr const uint8_t* kLastStripeSecret = kSecret + kSecretSize - kStripe - 7;

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
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

__extension__ using Uint128 = unsigned __int128;  // GCC and Clang on 64-bit targets

uint64_t Mul128Fold64(uint64_t a, uint64_t b) {
  const Uint128 p = static_cast<Uint128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}

// XXH3's scalar stripe and scramble (the AVX2 forms below compute the same).
void AccumulateStripe(uint64_t* acc, const uint8_t* data, const uint8_t* secret) {
  for (size_t i = 0; i < 8; ++i) {
    const uint64_t v = Read64(data + 8 * i);
    const uint64_t k = v ^ Read64(secret + 8 * i);
    acc[i ^ 1] += v;
    acc[i] += (k & 0xFFFFFFFFULL) * (k >> 32);
  }
}

void Scramble(uint64_t* acc) {
  for (size_t i = 0; i < 8; ++i) {
    uint64_t a = acc[i];
    a ^= a >> 47;
    a ^= Read64(kScrambleSecret + 8 * i);
    acc[i] = a * kPrime32_1;
  }
}

// Without AVX2: each stripe copied, then accumulated from the destination.
void CopyStripesPlain(uint8_t* d, const uint8_t* s, size_t stripes, uint64_t* acc, size_t& stripe,
                      uint8_t* last) {
  for (size_t k = 0; k < stripes; ++k, d += kStripe, s += kStripe) {
    std::memcpy(d, s, kStripe);
    AccumulateStripe(acc, d, kSecret + stripe * 8);
    if (++stripe == kStripesPerBlock) {
      Scramble(acc);
      stripe = 0;
    }
  }
  if (stripes > 0) std::memcpy(last, d - kStripe, kStripe);
}

#if defined(__x86_64__)
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

// Copies `stripes` stripes from s to d and accumulates them from the
// registers they were stored from, the first as stripe `stripe` of its
// block; the last one copied goes to `last`.
template <bool kStream>
__attribute__((target("avx2"))) void CopyStripesAvx2(uint8_t* d, const uint8_t* s, size_t stripes,
                                                     uint64_t* acc, size_t& stripe, uint8_t* last) {
  __m256i a0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(acc));
  __m256i a1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(acc + 4));
  __m256i x0 = _mm256_setzero_si256(), x1 = _mm256_setzero_si256();
  while (stripes > 0) {
    const size_t run = std::min(stripes, kStripesPerBlock - stripe);
    for (size_t k = 0; k < run; ++k, d += kStripe, s += kStripe) {
      x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
      x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
      auto* out = reinterpret_cast<__m256i*>(d);
      if constexpr (kStream) {
        _mm256_stream_si256(out, x0);
        _mm256_stream_si256(out + 1, x1);
      } else {
        _mm256_storeu_si256(out, x0);
        _mm256_storeu_si256(out + 1, x1);
      }
      const uint8_t* secret = kSecret + (stripe + k) * 8;
      a0 = Accumulate(a0, x0, secret);
      a1 = Accumulate(a1, x1, secret + 32);
    }
    stripes -= run;
    stripe += run;
    if (stripe == kStripesPerBlock) {
      a0 = Scramble(a0, kScrambleSecret);
      a1 = Scramble(a1, kScrambleSecret + 32);
      stripe = 0;
    }
  }
  if constexpr (kStream) _mm_sfence();  // the streamed lines before the caller's next use
  _mm256_store_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(acc + 4), a1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(last), x0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(last + 32), x1);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

void CopyStripes(uint8_t* d, const uint8_t* s, size_t stripes, bool stream, uint64_t* acc,
                 size_t& stripe, uint8_t* last) {
  if (stripes == 0) return;
#if defined(__x86_64__)
  if (HasAvx2()) {
    const bool nt =
        stream && stripes >= kStripesPerBlock && (reinterpret_cast<uintptr_t>(d) & 31) == 0;
    if (nt) return CopyStripesAvx2<true>(d, s, stripes, acc, stripe, last);
    return CopyStripesAvx2<false>(d, s, stripes, acc, stripe, last);
  }
#endif
  CopyStripesPlain(d, s, stripes, acc, stripe, last);
}

}  // namespace

CopyHasher::CopyHasher(bool stream)
    : acc_{kPrime32_3, kPrime64_1, kPrime64_2, kPrime64_3,
           kPrime64_4, kPrime32_2, kPrime64_5, kPrime32_1},
      stream_(stream) {}

void CopyHasher::AccumulateKept(const uint8_t* p) {
  AccumulateStripe(acc_, p, kSecret + stripe_ * 8);
  if (++stripe_ == kStripesPerBlock) {
    Scramble(acc_);
    stripe_ = 0;
  }
  std::memcpy(prev_, p, kStripe);
}

void CopyHasher::Copy(void* dst, const void* src, size_t n) {
  if (n == 0) return;  // an empty slice (its pointers may be null: memcpy forbids that)
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  const uint64_t before = total_;
  total_ += n;
  if (before + n <= kMidSizeMax) {  // short so far: kept whole as well
    std::memcpy(d, s, n);
    std::memcpy(head_ + before, d, n);
  }
  // Fill the pending stripe first: stripes lie at multiples of 64 in the value.
  if (pending_bytes_ > 0 && pending_bytes_ < kStripe) {
    const size_t k = std::min(kStripe - pending_bytes_, n);
    std::memcpy(d, s, k);
    std::memcpy(pending_ + pending_bytes_, d, k);
    pending_bytes_ += k;
    d += k;
    s += k;
    n -= k;
  }
  if (n == 0) return;
  if (pending_bytes_ == kStripe) AccumulateKept(pending_);  // more bytes follow it
  // Every whole stripe with a byte after it here, then the last 1..64 bytes wait.
  const size_t stripes = (n - 1) / kStripe;
  CopyStripes(d, s, stripes, stream_, acc_, stripe_, prev_);
  d += stripes * kStripe;
  s += stripes * kStripe;
  n -= stripes * kStripe;
  std::memcpy(d, s, n);
  std::memcpy(pending_, d, n);
  pending_bytes_ = n;
}

uint64_t CopyHasher::Digest() const {
  if (total_ <= kMidSizeMax) return HashValue(head_, static_cast<size_t>(total_));
  alignas(32) uint64_t acc[8];
  std::memcpy(acc, acc_, sizeof acc);
  // The last stripe: the value's last 64 bytes, which may begin in prev_.
  uint8_t last[kStripe];
  std::memcpy(last, prev_ + pending_bytes_, kStripe - pending_bytes_);
  std::memcpy(last + kStripe - pending_bytes_, pending_, pending_bytes_);
  AccumulateStripe(acc, last, kLastStripeSecret);
  uint64_t h = total_ * kPrime64_1;
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

uint64_t CopyAndHash(void* dst, const void* src, size_t n) {
  CopyHasher h(n >= kStreamingFrom);
  h.Copy(dst, src, n);
  return h.Digest();
}

}  // namespace crescent::transfer
