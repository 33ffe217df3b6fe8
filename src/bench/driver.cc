#include "bench/driver.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "bench/baseline.h"

namespace crescent::bench {

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void NoteError(RepSample& s, const Status& st) {
  ++s.errors;
  if (s.first_error.empty()) s.first_error = st.ToString();
}

// Client c's share of one put-get phase: `calls` calls of `per_call`
// consecutive keys each. Stamps are written and checked outside the timing.
void RunCalls(Backend& b, int c, Op op, uint64_t size, int rep,
              const std::vector<std::string>& keys, uint64_t calls, int per_call, RepSample& s) {
  const bool is_put = op == Op::kPut || op == Op::kBatchPut;
  const bool is_batch = op == Op::kBatchPut || op == Op::kBatchGet;
  const bool stamp = size >= 8;
  std::vector<void*> ptrs(static_cast<size_t>(per_call));
  for (int j = 0; j < per_call; ++j) ptrs[size_t(j)] = b.buffer(c) + size_t(j) * size;
  auto want = [&](uint64_t index) { return Stamp(size, rep, c, index, is_batch ? 1 : 0); };
  s.latency.Reserve(calls);
  for (uint64_t call = 0; call < calls; ++call) {
    const uint64_t first = call * uint64_t(per_call);
    std::span<const std::string> k(keys.data() + first, size_t(per_call));
    if (is_put && stamp) {
      for (int j = 0; j < per_call; ++j) {
        const uint64_t w = want(first + uint64_t(j));
        std::memcpy(ptrs[size_t(j)], &w, 8);
      }
    }
    const auto t0 = Clock::now();
    if (is_put) {
      std::vector<Status> st = b.Put(c, k, ptrs, size, is_batch);
      s.latency.Add(Micros(t0, Clock::now()));
      b.Release(c);
      for (const Status& x : st) {
        if (x.ok())
          s.bytes_moved += size;
        else
          NoteError(s, x);
      }
      continue;
    }
    std::vector<StatusOr<size_t>> got = b.Get(c, k, ptrs, size, is_batch);
    s.latency.Add(Micros(t0, Clock::now()));
    b.Release(c);
    for (size_t j = 0; j < got.size(); ++j) {
      if (!got[j].ok()) {
        NoteError(s, got[j].status());
        continue;
      }
      const uint64_t w = want(first + j);
      uint64_t seen = w;
      if (stamp) std::memcpy(&seen, ptrs[j], 8);
      if (got[j].value() == size && seen == w)
        s.bytes_moved += size;
      else
        NoteError(s, Status(ErrorCode::kCorruptData, "payload mismatch"));
    }
  }
  s.calls += calls;
  s.items += calls * uint64_t(per_call);
  s.bytes_requested += calls * uint64_t(per_call) * size;
}

// Client c's memcpy reference for a get phase of `calls` calls of `per_call`
// objects: the same copies into the same buffer slots, from `source` (whole
// objects, cycled through from *cursor, which advances).
void RunCopies(std::byte* buffer, const Buffer& source, uint64_t size, uint64_t calls, int per_call,
               uint64_t& cursor, RepSample& s) {
  const uint64_t slots = std::max<uint64_t>(1, source.size() / size);
  s.latency.Reserve(calls);
  for (uint64_t call = 0; call < calls; ++call) {
    const auto t0 = Clock::now();
    for (int j = 0; j < per_call; ++j) {
      std::byte* d = buffer + size_t(j) * size;
      std::memcpy(d, source.data() + (cursor++ % slots) * size, size);
      asm volatile("" : : "r"(d) : "memory");  // keep every copy
    }
    s.latency.Add(Micros(t0, Clock::now()));
  }
  s.calls += calls;
  s.items += calls * uint64_t(per_call);
  s.bytes_requested += calls * uint64_t(per_call) * size;
  s.bytes_moved += calls * uint64_t(per_call) * size;
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

// Client c's exists (or prefix) calls: call k asks plans[k % plans.size()].
void RunExistsCalls(Backend& b, int c, Op op, const std::vector<std::vector<std::string>>& plans,
                    uint64_t calls, int hits, RepSample& s) {
  std::vector<bool> present;
  s.latency.Reserve(calls);
  for (uint64_t k = 0; k < calls; ++k) {
    const auto& keys = plans[k % plans.size()];
    const auto t0 = Clock::now();
    Status st = Status::Ok();
    StatusOr<size_t> lead = size_t{0};
    if (op == Op::kPrefix)
      lead = b.QueryPrefix(c, keys);
    else
      st = b.Exists(c, keys, present);
    s.latency.Add(Micros(t0, Clock::now()));
    s.items_expected += uint64_t(hits);
    if (op == Op::kPrefix) {
      if (!lead.ok()) {
        NoteError(s, lead.status());
      } else {
        s.items_found += lead.value();
        if (lead.value() != size_t(hits))
          NoteError(s, Status(ErrorCode::kInternal, "wrong prefix answer"));
      }
      continue;
    }
    if (!st.ok()) {
      NoteError(s, st);
      continue;
    }
    bool right = present.size() == keys.size();
    for (size_t i = 0; i < present.size(); ++i) {
      s.items_found += present[i];
      right = right && present[i] == (static_cast<int>(i) < hits);
    }
    if (!right) NoteError(s, Status(ErrorCode::kInternal, "wrong exists answer"));
  }
  s.calls += calls;
  s.items += calls * plans[0].size();
}

// One client's ends of the raw streams beside the batch phases (RunPutGet).
struct StreamSide {
  StreamSide(uint64_t slot_bytes, uint64_t region_bytes) : slots(slot_bytes), region(region_bytes) {}
  Buffer slots;
  Buffer region;
};

// Each client's stream as a batch put moves its objects (slots to region) or
// as a batch get does (region to slots).
std::vector<StreamEnds> StreamEndsOf(const std::vector<std::unique_ptr<StreamSide>>& sides,
                                     bool put) {
  std::vector<StreamEnds> ends;
  for (const auto& s : sides) {
    ends.push_back(put ? StreamEnds{s->slots.bytes(), s->region.span()}
                       : StreamEnds{s->region.bytes(), s->slots.span()});
  }
  return ends;
}

RepSample Merged(const std::vector<RepSample>& per, double seconds) {
  RepSample total;
  for (const RepSample& s : per) total.Merge(s);
  total.seconds = seconds;
  return total;
}

}  // namespace

StatusOr<std::vector<PhaseResult>> RunPutGet(std::span<const Contender> contenders,
                                             const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  const int batch = std::max(1, o.batch());
  const size_t n_sides = contenders.size();
  std::vector<std::string> prefixes;  // each contender's keys its own
  for (size_t k = 0; k < n_sides; ++k) prefixes.push_back(RunPrefix() + "/c" + std::to_string(k));
  // The memcpy references' sources, one per client thread, and where each
  // thread's copies have got to (they walk on across phases and sizes).
  std::vector<std::unique_ptr<Buffer>> sources;
  std::vector<uint64_t> cursors(size_t(o.clients), 0);
  bool any_memcpy = false;
  bool any_stream = false;
  for (const Contender& c : contenders) {
    any_memcpy = any_memcpy || c.memcpy_beside_gets;
    any_stream = any_stream || c.stream_beside_batches;
  }
  if (any_memcpy) {
    uint64_t largest = 0;
    for (uint64_t s : o.sizes) largest = std::max(largest, s);
    for (int c = 0; c < o.clients; ++c)
      sources.push_back(std::make_unique<Buffer>(std::max<uint64_t>(256ull << 20, 2 * largest)));
  }
  const bool side_by_side = n_sides > 1;
  for (uint64_t size : o.sizes) {
    const uint64_t n = o.OpsFor(size);
    const uint64_t nb = std::max<uint64_t>(kMinBatchCalls, n / uint64_t(batch));
    struct Side {
      std::vector<RepSample> reps[kPutGetPhases];
      std::vector<RepSample> copies[2];   // beside get, beside batch_get
      std::vector<RepSample> streams[2];  // beside batch_put, beside batch_get
    };
    std::vector<Side> sides(n_sides);
    // The raw streams' ends, per client, with the cache state of a batch
    // phase: `slots` as the client's buffer (one call's objects), `region` as
    // the store node's memory (as many distinct objects as the phase moves).
    // One untimed pass first, so that no timed stream is the first to touch
    // either (on these VMs that first pass runs several times slower).
    std::vector<std::unique_ptr<StreamSide>> stream_sides;
    if (any_stream) {
      for (int c = 0; c < o.clients; ++c) {
        stream_sides.push_back(std::make_unique<StreamSide>(uint64_t(batch) * size,
                                                            nb * uint64_t(batch) * size));
      }
      if (StatusOr<RepSample> s = TcpStreamsOnce(size, nb * uint64_t(batch),
                                                 StreamEndsOf(stream_sides, true),
                                                 o.tcp_congestion);
          !s.ok()) {
        return s.status();
      }
    }
    for (int rep = 0; rep < o.reps; ++rep) {
      // Keys are built before timing; the timed loops only call the backend.
      std::vector<PutGetKeys> keys;
      for (size_t k = 0; k < n_sides; ++k) {
        keys.push_back(MakePutGetKeys(
            prefixes[k] + "/s" + std::to_string(size) + "/r" + std::to_string(rep), o.clients, n,
            nb * uint64_t(batch)));
      }
      for (int phase = 0; phase < kPutGetPhases; ++phase) {
        const Op op = static_cast<Op>(phase);
        const bool is_batch = phase >= 2;
        const bool is_get = op == Op::kGet || op == Op::kBatchGet;
        for (size_t k = 0; k < n_sides; ++k) {
          Backend& b = *contenders[k].backend;
          Side& side = sides[k];
          if (is_get && contenders[k].memcpy_beside_gets) {
            std::vector<RepSample> per(static_cast<size_t>(o.clients));
            const double secs = RunParallel(o.clients, [&](int c) {
              RunCopies(b.buffer(c), *sources[size_t(c)], size, is_batch ? nb : n,
                        is_batch ? batch : 1, cursors[size_t(c)], per[size_t(c)]);
            });
            side.copies[is_batch].push_back(Merged(per, secs));
            if (o.on_phase) {
              o.on_phase(std::string("memcpy as ") + (is_batch ? "batch get " : "get ") +
                         FormatBytes(size, BytesStyle::kLabel) + " rep " + std::to_string(rep + 1));
            }
          }
          if (is_batch && contenders[k].stream_beside_batches) {
            // As many objects per stream as each client's batch phase moves:
            // a put's from the client's slots into distinct memory, a get's
            // back out of it into the slots.
            const bool put = op == Op::kBatchPut;
            StatusOr<RepSample> s = TcpStreamsOnce(size, nb * uint64_t(batch),
                                                   StreamEndsOf(stream_sides, put),
                                                   o.tcp_congestion);
            if (!s.ok()) return s.status();
            side.streams[put ? 0 : 1].push_back(std::move(s.value()));
            if (o.on_phase) {
              o.on_phase(std::string("raw tcp as ") + (put ? "batch put " : "batch get ") +
                         FormatBytes(size, BytesStyle::kLabel) + " rep " + std::to_string(rep + 1));
            }
          }
          std::vector<RepSample> per(static_cast<size_t>(o.clients));
          const double secs = RunParallel(o.clients, [&](int c) {
            const auto& kk = is_batch ? keys[k].batched[size_t(c)] : keys[k].single[size_t(c)];
            RunCalls(b, c, op, size, rep, kk, is_batch ? nb : n, is_batch ? batch : 1,
                     per[size_t(c)]);
          });
          RepSample total = Merged(per, secs);
          if (total.errors > 0 && total.bytes_moved == 0) {
            // Nothing got through (no cluster, no space): stop rather than time errors.
            return Status(ErrorCode::kUnavailable, b.system() + " " + std::to_string(size) +
                                                       "-byte phase failed: " + total.first_error);
          }
          side.reps[phase].push_back(std::move(total));
          if (o.on_phase)
            o.on_phase(b.Label(op) + " " + FormatBytes(size, BytesStyle::kLabel) + " rep " +
                       std::to_string(rep + 1));
        }
      }
      // Untimed cleanup, so the next repetition finds an empty store.
      for (size_t k = 0; k < n_sides; ++k) {
        Backend& b = *contenders[k].backend;
        for (int c = 0; c < o.clients; ++c) {
          b.Remove(c, keys[k].single[size_t(c)]);
          b.Remove(c, keys[k].batched[size_t(c)]);
        }
      }
      if (rep + 1 < o.reps) {
        for (const Contender& c : contenders) c.backend->Settle();
      }
    }
    for (size_t k = 0; k < n_sides; ++k) {
      const size_t first = out.size();
      AppendPutGetRows(contenders[k].backend->system(), size, o.clients, batch, sides[k].reps,
                       out);
      const bool beside = side_by_side || contenders[k].memcpy_beside_gets ||
                          contenders[k].stream_beside_batches;
      for (size_t i = first; i < out.size(); ++i) out[i].side_by_side = beside;
      if (contenders[k].memcpy_beside_gets) {
        for (int g = 0; g < 2; ++g) {
          PhaseResult r = Reference("memcpy", g ? "copy_as_batch_get" : "copy_as_get", size,
                                    o.clients, sides[k].copies[g]);
          r.batch = g ? batch : 1;
          r.side_by_side = true;
          PhaseResult& get = out[first + (g ? 3 : 1)];
          get.paired_ratio = PairedRatio(get, r);
          out.push_back(std::move(r));
        }
      }
      if (contenders[k].stream_beside_batches) {
        for (int g = 0; g < 2; ++g) {
          PhaseResult r = Reference("tcp", g ? "stream_as_batch_get" : "stream_as_batch_put", size,
                                    o.clients, sides[k].streams[g]);
          r.side_by_side = true;
          out.push_back(std::move(r));
        }
      }
    }
  }
  return out;
}

StatusOr<std::vector<PhaseResult>> RunExists(std::span<Backend* const> backends,
                                             const WorkloadOptions& o, Op op) {
  std::vector<PhaseResult> out;
  const char* name = op == Op::kPrefix ? "prefix" : "exists";
  const uint64_t pool = ExistsPoolSize(o);
  const size_t n_sides = backends.size();
  std::vector<std::string> prefixes;
  std::vector<std::vector<std::string>> pool_keys(n_sides);
  for (size_t k = 0; k < n_sides; ++k) {
    prefixes.push_back(RunPrefix() + "/c" + std::to_string(k));
    for (uint64_t i = 0; i < pool; ++i) pool_keys[k].push_back(ExistsPoolKey(prefixes[k], i));
    if (Status s = backends[k]->Store(pool_keys[k], o.exists_value_size); !s.ok()) return s;
  }
  for (int batch : o.batches) {
    for (double miss : o.misses) {
      const int hits = ExistsHits(batch, miss);
      const uint64_t calls = o.CallsFor(uint64_t(batch));
      std::vector<std::vector<std::vector<std::vector<std::string>>>> plans;
      for (size_t k = 0; k < n_sides; ++k)
        plans.push_back(ExistsPlans(prefixes[k], pool, batch, hits, o.clients, calls));
      std::vector<std::vector<RepSample>> reps(n_sides);
      for (int rep = 0; rep < o.reps; ++rep) {
        for (size_t k = 0; k < n_sides; ++k) {
          Backend& b = *backends[k];
          std::vector<RepSample> per(static_cast<size_t>(o.clients));
          const double secs = RunParallel(o.clients, [&](int c) {
            RunExistsCalls(b, c, op, plans[k][size_t(c)], calls, hits, per[size_t(c)]);
          });
          RepSample total = Merged(per, secs);
          if (total.errors == total.calls) {
            return Status(ErrorCode::kUnavailable,
                          std::string("every ") + name + " call failed: " + total.first_error);
          }
          reps[k].push_back(std::move(total));
          if (o.on_phase)
            o.on_phase(b.Label(op) + " batch " + std::to_string(batch) + " miss " +
                       Fixed(miss, 2) + " rep " + std::to_string(rep + 1));
        }
      }
      for (size_t k = 0; k < n_sides; ++k) {
        PhaseResult r;
        r.system = backends[k]->exists_system();
        r.op = name;
        r.clients = o.clients;
        r.batch = batch;
        r.miss = miss;
        r = Summarize(r, reps[k]);
        r.side_by_side = n_sides > 1;
        out.push_back(std::move(r));
      }
    }
  }
  for (size_t k = 0; k < n_sides; ++k) backends[k]->Remove(0, pool_keys[k]);
  return out;
}

StatusOr<std::vector<PhaseResult>> RunExists(Backend& b, const WorkloadOptions& o, Op op) {
  Backend* one = &b;
  return RunExists({&one, 1}, o, op);
}

}  // namespace crescent::bench
