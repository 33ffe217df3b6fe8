#include "bench/workloads.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <thread>

namespace crescent::bench {

using Clock = std::chrono::steady_clock;

uint64_t WorkloadOptions::OpsFor(uint64_t size) const {
  const uint64_t n = size == 0 ? max_ops : bytes_per_client / size;
  return std::clamp<uint64_t>(n, min_ops, std::max(min_ops, max_ops));
}

uint64_t WorkloadOptions::CallsFor(uint64_t batch) const {
  const uint64_t n = batch == 0 ? max_calls : keys_per_client / batch;
  return std::clamp<uint64_t>(n, min_calls, std::max(min_calls, max_calls));
}

double RunParallel(int clients, const std::function<void(int)>& body) {
  std::latch ready(clients);
  std::latch go(1);
  std::vector<Clock::time_point> ends(static_cast<size_t>(clients));
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      ready.count_down();
      go.wait();
      body(c);
      ends[static_cast<size_t>(c)] = Clock::now();
    });
  }
  ready.wait();
  const auto start = Clock::now();
  go.count_down();
  for (auto& t : threads) t.join();
  auto last = start;
  for (auto e : ends) last = std::max(last, e);
  return std::chrono::duration<double>(last - start).count();
}

std::string RunPrefix() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return "bench-" + std::to_string(getpid()) + "-" + std::to_string(ns);
}

uint64_t Stamp(uint64_t size, int rep, int client, uint64_t index, int kind) {
  // splitmix64 of the fields, never 0.
  uint64_t x = size * 0x9E3779B97F4A7C15ull ^ (uint64_t(rep) << 48) ^ (uint64_t(client) << 32) ^
               (index << 2) ^ uint64_t(kind);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x | 1;
}

Buffer::Buffer(size_t size) : size_(size) {
  const size_t rounded = (std::max<size_t>(size, 1) + 4095) / 4096 * 4096;
  data_ = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
  std::memset(data_, 0x5a, rounded);  // fault every page in before timing
}
Buffer::~Buffer() { std::free(data_); }

size_t ClientBufferSize(const WorkloadOptions& o) {
  if (o.sizes.empty()) return 0;
  uint64_t max_size = 8;
  for (uint64_t s : o.sizes) max_size = std::max(max_size, s);
  return size_t(max_size) * size_t(std::max(1, o.batch()));
}

std::string ExistsPoolKey(const std::string& prefix, uint64_t i) {
  return prefix + "/e/" + std::to_string(i);
}

uint64_t ExistsPoolSize(const WorkloadOptions& o) {
  int max_batch = 1;
  for (int b : o.batches) max_batch = std::max(max_batch, b);
  return std::max<uint64_t>(256, uint64_t(max_batch) * 2);
}

int ExistsHits(int batch, double miss) {
  return batch - static_cast<int>(std::llround(batch * std::clamp(miss, 0.0, 1.0)));
}

std::vector<std::string> ExistsKeys(const std::string& prefix, uint64_t pool, int batch, int hits,
                                    int client, uint64_t call) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(batch));
  const uint64_t start = (uint64_t(client) * 7919 + call * uint64_t(batch)) % pool;
  for (int i = 0; i < batch; ++i) {
    if (i < hits) {
      keys.push_back(ExistsPoolKey(prefix, (start + uint64_t(i)) % pool));
    } else {
      keys.push_back(prefix + "/m/" + std::to_string(client) + "/" + std::to_string(call) + "/" +
                     std::to_string(i));
    }
  }
  return keys;
}

PutGetKeys MakePutGetKeys(const std::string& base, int clients, uint64_t n, uint64_t batched) {
  PutGetKeys keys;
  keys.single.resize(static_cast<size_t>(clients));
  keys.batched.resize(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    const std::string client = base + "/c" + std::to_string(c);
    for (uint64_t i = 0; i < n; ++i)
      keys.single[size_t(c)].push_back(client + "/k" + std::to_string(i));
    for (uint64_t i = 0; i < batched; ++i) {
      keys.batched[size_t(c)].push_back(client + "/b" + std::to_string(i));
    }
  }
  return keys;
}

std::vector<std::vector<std::vector<std::string>>> ExistsPlans(const std::string& prefix,
                                                               uint64_t pool, int batch, int hits,
                                                               int clients, uint64_t calls) {
  const uint64_t distinct = std::min<uint64_t>(calls, 64);
  std::vector<std::vector<std::vector<std::string>>> plans(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    for (uint64_t k = 0; k < distinct; ++k) {
      plans[size_t(c)].push_back(ExistsKeys(prefix, pool, batch, hits, c, k));
    }
  }
  return plans;
}

}  // namespace crescent::bench
