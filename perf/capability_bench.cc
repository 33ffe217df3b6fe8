// Capability tags (HMAC-SHA256, capability.h): what a master pays per replica it
// returns and a store node per transfer it checks. BM_OneShotHmac is the
// reference in the same run: OpenSSL's one-shot HMAC() over the same bytes,
// which keys a fresh state per call (what Sign did before it kept keyed states).
#include <benchmark/benchmark.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

#include "transfer/capability.h"

namespace crescent::transfer {
namespace {

const std::string kSecret = "capability-bench-secret-0123456789";
const std::string kBinding = "10.0.0.2:40123;shm=crescent-4242-0123456789abcdef";

CapabilitySigner MakeSigner() { return *CapabilitySigner::Create(kSecret); }

void BM_Sign(benchmark::State& state) {
  CapabilitySigner signer = MakeSigner();
  uint64_t offset = 0;
  for (auto _ : state) {
    Capability cap = signer.Sign(kBinding, 1, offset, 4096, AccessOp::kRead, 1'900'000'000'000);
    benchmark::DoNotOptimize(cap.tag);
    offset += 4096;
  }
}
BENCHMARK(BM_Sign);

void BM_Verify(benchmark::State& state) {
  CapabilitySigner signer = MakeSigner();
  const Capability cap = signer.Sign(kBinding, 1, 0, 4096, AccessOp::kRead, 1'900'000'000'000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(signer.Verify(kBinding, cap, AccessOp::kRead, 1'800'000'000'000));
  }
}
BENCHMARK(BM_Verify);

void BM_OneShotHmac(benchmark::State& state) {
  // The encoded message of one capability: 4 + binding + 29 bytes.
  const std::string msg = std::string(4, 'l') + kBinding + std::string(29, 'f');
  unsigned char out[32];
  unsigned int len = 0;
  for (auto _ : state) {
    HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
         reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_OneShotHmac);

}  // namespace
}  // namespace crescent::transfer
