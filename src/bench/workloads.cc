#include "bench/workloads.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <thread>

namespace crescent::bench {

using Clock = std::chrono::steady_clock;

namespace {

// Waits (untimed) until the master holds no space of removed objects: those
// removed while a read lease was on them come free when the lease ends.
// Bounded by a default lease and its grace; past that the next puts may evict.
void WaitForHeldSpace(Client& client) {
  const auto until = Clock::now() + std::chrono::seconds(12);
  for (;;) {
    StatusOr<ClusterStat> st = client.Stat();
    if (!st.ok() || st->held_bytes == 0 || Clock::now() >= until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
}  // namespace

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

StatusOr<std::unique_ptr<CrescentWorkload>> CrescentWorkload::Connect(
    const std::string& master, const WorkloadOptions& options, bool shm, int tcp_lanes) {
  std::unique_ptr<CrescentWorkload> w(new CrescentWorkload());
  w->o_ = options;
  w->shm_ = shm;
  w->prefix_ = RunPrefix();
  uint64_t max_size = 8;
  for (uint64_t s : options.sizes) max_size = std::max(max_size, s);
  const size_t buffer_size = size_t(max_size) * size_t(std::max(1, options.batch()));
  for (int c = 0; c < options.clients; ++c) {
    ClientConfig cfg;
    cfg.master_address = master;
    cfg.use_shared_memory = shm;
    cfg.tcp_lanes = tcp_lanes;
    cfg.transfer_timeout_ms = 60000;
    auto client = Client::Connect(cfg);
    if (!client.ok()) return client.status();
    if (!options.sizes.empty()) {
      auto buf = std::make_unique<Buffer>(buffer_size);
      if (Status s = client.value()->RegisterBuffer(buf->data(), buf->size()); !s.ok()) return s;
      w->buffers_.push_back(std::move(buf));
    }
    w->clients_.push_back(std::move(client.value()));
  }
  return w;
}

CrescentWorkload::~CrescentWorkload() {
  for (size_t i = 0; i < buffers_.size(); ++i)
    (void)clients_[i]->UnregisterBuffer(buffers_[i]->data());
}

namespace {

void NoteError(RepSample& s, const Status& st) {
  ++s.errors;
  if (s.first_error.empty()) s.first_error = st.ToString();
}

}  // namespace

StatusOr<std::vector<PhaseResult>> CrescentWorkload::RunPutGet() {
  std::vector<PhaseResult> out;
  const int batch = std::max(1, o_.batch());
  for (uint64_t size : o_.sizes) {
    const uint64_t n = o_.OpsFor(size);
    const uint64_t nb = std::max<uint64_t>(kMinBatchCalls, n / uint64_t(batch));
    std::vector<RepSample> reps[kPutGetPhases];
    for (int rep = 0; rep < o_.reps; ++rep) {
      const std::string base = prefix_ + "/s" + std::to_string(size) + "/r" + std::to_string(rep);
      // Keys are built before timing; the timed loops only call the client.
      const auto [single, batched] = MakePutGetKeys(base, o_.clients, n, nb * uint64_t(batch));
      for (int phase = 0; phase < kPutGetPhases; ++phase) {
        std::vector<RepSample> per(static_cast<size_t>(o_.clients));
        const bool is_batch = phase >= 2;
        const bool is_put = phase % 2 == 0;
        const double secs = RunParallel(o_.clients, [&](int c) {
          RepSample& s = per[size_t(c)];
          Client& client = *clients_[size_t(c)];
          std::byte* buf = buffers_[size_t(c)]->data();
          const bool stamp = size >= 8;
          if (!is_batch) {
            s.latency.Reserve(n);
            for (uint64_t i = 0; i < n; ++i) {
              const uint64_t want = Stamp(size, rep, c, i, 0);
              if (is_put && stamp) std::memcpy(buf, &want, 8);
              const auto t0 = Clock::now();
              uint64_t moved = 0;
              if (is_put) {
                Status st = client.PutFrom(single[size_t(c)][i], buf, size);
                if (st.ok())
                  moved = size;
                else
                  NoteError(s, st);
              } else {
                StatusOr<size_t> got = client.GetInto(single[size_t(c)][i], buf, size);
                if (!got.ok()) {
                  NoteError(s, got.status());
                } else {
                  uint64_t seen = want;
                  if (stamp) std::memcpy(&seen, buf, 8);
                  if (got.value() == size && seen == want)
                    moved = size;
                  else
                    NoteError(s, Status(ErrorCode::kCorruptData, "payload mismatch"));
                }
              }
              s.latency.Add(Micros(t0, Clock::now()));
              s.bytes_moved += moved;
            }
            s.calls += n;
            s.items += n;
            s.bytes_requested += n * size;
          } else {
            std::vector<void*> ptrs(static_cast<size_t>(batch));
            std::vector<size_t> sizes(static_cast<size_t>(batch), size);
            for (int j = 0; j < batch; ++j) ptrs[size_t(j)] = buf + size_t(j) * size;
            s.latency.Reserve(nb);
            for (uint64_t call = 0; call < nb; ++call) {
              std::span<const std::string> keys(batched[size_t(c)].data() + call * uint64_t(batch),
                                                size_t(batch));
              if (is_put && stamp) {
                for (int j = 0; j < batch; ++j) {
                  const uint64_t want =
                      Stamp(size, rep, c, call * uint64_t(batch) + uint64_t(j), 1);
                  std::memcpy(ptrs[size_t(j)], &want, 8);
                }
              }
              const auto t0 = Clock::now();
              if (is_put) {
                std::vector<Status> st = client.BatchPutFrom(keys, ptrs, sizes);
                s.latency.Add(Micros(t0, Clock::now()));
                for (const Status& x : st) {
                  if (x.ok())
                    s.bytes_moved += size;
                  else
                    NoteError(s, x);
                }
              } else {
                std::vector<StatusOr<size_t>> got = client.BatchGetInto(keys, ptrs, sizes);
                s.latency.Add(Micros(t0, Clock::now()));
                for (int j = 0; j < batch; ++j) {
                  const auto& g = got[size_t(j)];
                  if (!g.ok()) {
                    NoteError(s, g.status());
                    continue;
                  }
                  const uint64_t want =
                      Stamp(size, rep, c, call * uint64_t(batch) + uint64_t(j), 1);
                  uint64_t seen = want;
                  if (stamp) std::memcpy(&seen, ptrs[size_t(j)], 8);
                  if (g.value() == size && seen == want)
                    s.bytes_moved += size;
                  else
                    NoteError(s, Status(ErrorCode::kCorruptData, "payload mismatch"));
                }
              }
            }
            s.calls += nb;
            s.items += nb * uint64_t(batch);
            s.bytes_requested += nb * uint64_t(batch) * size;
          }
        });
        RepSample total;
        for (const RepSample& s : per) total.Merge(s);
        total.seconds = secs;
        if (total.errors > 0 && total.bytes_moved == 0) {
          // Nothing got through (no cluster, no space): stop rather than time errors.
          return Status(ErrorCode::kUnavailable, system() + " " + std::to_string(size) +
                                                     "-byte phase failed: " + total.first_error);
        }
        reps[phase].push_back(std::move(total));
        if (o_.on_phase) {
          static const char* kNames[] = {"put", "get", "batch put", "batch get"};
          o_.on_phase(system() + " " + kNames[phase] + " " + SizeLabel(size) + " rep " +
                      std::to_string(rep + 1));
        }
      }
      // Untimed cleanup, so the next repetition finds an empty store. The gets
      // left read leases, so the removed objects' space is held until they end
      // (the master hands out no range a reader may still copy): wait for it.
      for (int c = 0; c < o_.clients; ++c) {
        clients_[size_t(c)]->BatchRemove(single[size_t(c)], true);
        clients_[size_t(c)]->BatchRemove(batched[size_t(c)], true);
      }
      if (rep + 1 < o_.reps) WaitForHeldSpace(*clients_[0]);
    }
    AppendPutGetRows(system(), size, o_.clients, batch, reps, out);
  }
  return out;
}

void AppendPutGetRows(const std::string& system, uint64_t size, int clients, int batch,
                      const std::vector<RepSample> (&reps)[kPutGetPhases],
                      std::vector<PhaseResult>& out) {
  static const char* kOps[] = {"put", "get", "batch_put", "batch_get"};
  for (int phase = 0; phase < kPutGetPhases; ++phase) {
    PhaseResult r;
    r.system = system;
    r.op = kOps[phase];
    r.size = size;
    r.clients = clients;
    r.batch = phase >= 2 ? batch : 1;
    out.push_back(Summarize(r, reps[phase]));
  }
}

StatusOr<std::vector<PhaseResult>> CrescentWorkload::RunExists() {
  std::vector<PhaseResult> out;
  const uint64_t pool = ExistsPoolSize(o_);
  // Store the pool once (copying API; the values are tiny).
  {
    std::vector<std::byte> value(o_.exists_value_size, std::byte{0x42});
    for (uint64_t start = 0; start < pool; start += 512) {
      std::vector<std::string> keys;
      std::vector<std::span<const std::byte>> values;
      for (uint64_t i = start; i < std::min(pool, start + 512); ++i) {
        keys.push_back(ExistsPoolKey(prefix_, i));
        values.emplace_back(value);
      }
      for (const Status& s : clients_[0]->BatchPut(keys, values)) {
        if (!s.ok()) return s;
      }
    }
  }
  for (int batch : o_.batches) {
    for (double miss : o_.misses) {
      const int hits = ExistsHits(batch, miss);
      const uint64_t calls = o_.CallsFor(uint64_t(batch));
      const auto plans = ExistsPlans(prefix_, pool, batch, hits, o_.clients, calls);
      const uint64_t distinct = plans[0].size();
      std::vector<RepSample> reps;
      for (int rep = 0; rep < o_.reps; ++rep) {
        std::vector<RepSample> per(static_cast<size_t>(o_.clients));
        const double secs = RunParallel(o_.clients, [&](int c) {
          RepSample& s = per[size_t(c)];
          Client& client = *clients_[size_t(c)];
          s.latency.Reserve(calls);
          for (uint64_t k = 0; k < calls; ++k) {
            const auto& keys = plans[size_t(c)][k % distinct];
            const auto t0 = Clock::now();
            StatusOr<std::vector<bool>> r = client.BatchExists(keys);
            s.latency.Add(Micros(t0, Clock::now()));
            s.items_expected += uint64_t(hits);
            if (!r.ok()) {
              NoteError(s, r.status());
              continue;
            }
            uint64_t found = 0;
            bool right = r.value().size() == keys.size();
            for (size_t i = 0; right && i < keys.size(); ++i) {
              found += r.value()[i];
              right = r.value()[i] == (static_cast<int>(i) < hits);
            }
            s.items_found += found;
            if (!right) NoteError(s, Status(ErrorCode::kInternal, "wrong exists answer"));
          }
          s.calls += calls;
          s.items += calls * uint64_t(batch);
        });
        RepSample total;
        for (const RepSample& s : per) total.Merge(s);
        total.seconds = secs;
        if (total.errors == total.calls) {
          return Status(ErrorCode::kUnavailable, "every exists call failed: " + total.first_error);
        }
        reps.push_back(std::move(total));
        if (o_.on_phase)
          o_.on_phase(system() + " exists batch " + std::to_string(batch) + " miss " +
                      Fixed(miss, 2) + " rep " + std::to_string(rep + 1));
      }
      PhaseResult r;
      r.system = "crescent";
      r.op = "exists";
      r.clients = o_.clients;
      r.batch = batch;
      r.miss = miss;
      out.push_back(Summarize(r, reps));
    }
  }
  for (uint64_t start = 0; start < pool; start += 512) {
    std::vector<std::string> keys;
    for (uint64_t i = start; i < std::min(pool, start + 512); ++i)
      keys.push_back(ExistsPoolKey(prefix_, i));
    clients_[0]->BatchRemove(keys, true);
  }
  return out;
}

}  // namespace crescent::bench
