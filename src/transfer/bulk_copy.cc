#include "transfer/bulk_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace crescent::transfer {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx2"))) void StreamCopy(std::byte* d, const std::byte* s, size_t n) {
  // Head: plain copy up to a 32-byte aligned destination.
  size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  // Streaming stores are weakly ordered: fence before anyone is told.
  _mm_sfence();
  std::memcpy(d + i, s + i, n - i);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

void BulkCopy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  if (n >= kStreamingFrom && HasAvx2()) {
    return StreamCopy(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n);
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace crescent::transfer
