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

// What every phase of one RunPutGet shares.
struct PutGetRun {
  std::span<const Contender> contenders;
  const WorkloadOptions& o;
  int batch;
  std::vector<std::string> prefixes;  // each contender's keys its own
  // The memcpy references' sources, one per client thread, and where each
  // thread's copies have got to (they walk on across phases and sizes).
  std::vector<std::unique_ptr<Buffer>> sources;
  std::vector<uint64_t> cursors;
  bool any_stream = false;
};

// One object size's calls: n single ones, nb batches of `batch`.
struct SizeRun {
  uint64_t size, n, nb;
  // The raw streams' ends, per client (only with a stream beside batches).
  std::vector<std::unique_ptr<StreamSide>> stream_sides;
};

// One contender's samples at one size.
struct ContenderSamples {
  std::vector<RepSample> reps[kPutGetPhases];
  std::vector<RepSample> copies[2];   // beside get, beside batch_get
  std::vector<RepSample> streams[2];  // beside batch_put, beside batch_get
};

PutGetRun StartPutGet(std::span<const Contender> contenders, const WorkloadOptions& o) {
  PutGetRun run{contenders, o, std::max(1, o.batch()), {}, {}, {}, false};
  for (size_t k = 0; k < contenders.size(); ++k) {
    run.prefixes.push_back(RunPrefix() + "/c" + std::to_string(k));
  }
  run.cursors.assign(size_t(o.clients), 0);
  bool any_memcpy = false;
  for (const Contender& c : contenders) {
    any_memcpy = any_memcpy || c.memcpy_beside_gets;
    run.any_stream = run.any_stream || c.stream_beside_batches;
  }
  if (any_memcpy) {
    uint64_t largest = 0;
    for (uint64_t s : o.sizes) largest = std::max(largest, s);
    for (int c = 0; c < o.clients; ++c)
      run.sources.push_back(
          std::make_unique<Buffer>(std::max<uint64_t>(256ull << 20, 2 * largest)));
  }
  return run;
}

// The raw streams' ends, per client, with the cache state of a batch phase:
// `slots` as the client's buffer (one call's objects), `region` as the store
// node's memory (as many distinct objects as the phase moves). One untimed
// pass first, so that no timed stream is the first to touch either (on these
// VMs that first pass runs several times slower).
Status PrepareStreams(const PutGetRun& run, SizeRun& sz) {
  const uint64_t batch = uint64_t(run.batch);
  for (int c = 0; c < run.o.clients; ++c) {
    sz.stream_sides.push_back(
        std::make_unique<StreamSide>(batch * sz.size, sz.nb * batch * sz.size));
  }
  StatusOr<RepSample> s = TcpStreamsOnce(sz.size, sz.nb * batch,
                                         StreamEndsOf(sz.stream_sides, true), run.o.tcp_congestion);
  return s.ok() ? Status::Ok() : s.status();
}

std::string RepLabel(uint64_t size, int rep) {
  return FormatBytes(size, BytesStyle::kLabel) + " rep " + std::to_string(rep + 1);
}

// The memcpy reference beside a get phase (the same copies into the same
// buffer slots).
void CopyBesideGets(PutGetRun& run, Backend& b, const SizeRun& sz, bool is_batch, int rep,
                    ContenderSamples& samples) {
  const WorkloadOptions& o = run.o;
  std::vector<RepSample> per(static_cast<size_t>(o.clients));
  const double secs = RunParallel(o.clients, [&](int c) {
    RunCopies(b.buffer(c), *run.sources[size_t(c)], sz.size, is_batch ? sz.nb : sz.n,
              is_batch ? run.batch : 1, run.cursors[size_t(c)], per[size_t(c)]);
  });
  samples.copies[is_batch].push_back(Merged(per, secs));
  if (o.on_phase) {
    o.on_phase(std::string("memcpy as ") + (is_batch ? "batch get " : "get ") +
               RepLabel(sz.size, rep));
  }
}

// The raw TCP streams beside a batch phase: as many objects per stream as
// each client's batch phase moves, a put's from the client's slots into
// distinct memory, a get's back out of it into the slots.
Status StreamBesideBatches(const PutGetRun& run, const SizeRun& sz, Op op, int rep,
                           ContenderSamples& samples) {
  const bool put = op == Op::kBatchPut;
  StatusOr<RepSample> s = TcpStreamsOnce(sz.size, sz.nb * uint64_t(run.batch),
                                         StreamEndsOf(sz.stream_sides, put), run.o.tcp_congestion);
  if (!s.ok()) return s.status();
  samples.streams[put ? 0 : 1].push_back(std::move(s.value()));
  if (run.o.on_phase) {
    run.o.on_phase(std::string("raw tcp as ") + (put ? "batch put " : "batch get ") +
                   RepLabel(sz.size, rep));
  }
  return Status::Ok();
}

// Contender k's phase `op` of repetition `rep`, with the references beside it.
Status RunContenderPhase(PutGetRun& run, size_t k, const SizeRun& sz, int rep, Op op,
                         const PutGetKeys& keys, ContenderSamples& samples) {
  const WorkloadOptions& o = run.o;
  const Contender& contender = run.contenders[k];
  Backend& b = *contender.backend;
  const bool is_batch = op == Op::kBatchPut || op == Op::kBatchGet;
  const bool is_get = op == Op::kGet || op == Op::kBatchGet;
  if (is_get && contender.memcpy_beside_gets) CopyBesideGets(run, b, sz, is_batch, rep, samples);
  if (is_batch && contender.stream_beside_batches) {
    if (Status s = StreamBesideBatches(run, sz, op, rep, samples); !s.ok()) return s;
  }
  std::vector<RepSample> per(static_cast<size_t>(o.clients));
  const double secs = RunParallel(o.clients, [&](int c) {
    const auto& kk = is_batch ? keys.batched[size_t(c)] : keys.single[size_t(c)];
    RunCalls(b, c, op, sz.size, rep, kk, is_batch ? sz.nb : sz.n, is_batch ? run.batch : 1,
             per[size_t(c)]);
  });
  RepSample total = Merged(per, secs);
  if (total.errors > 0 && total.bytes_moved == 0) {
    // Nothing got through (no cluster, no space): stop rather than time errors.
    return Status(ErrorCode::kUnavailable, b.system() + " " + std::to_string(sz.size) +
                                               "-byte phase failed: " + total.first_error);
  }
  samples.reps[static_cast<int>(op)].push_back(std::move(total));
  if (o.on_phase) o.on_phase(b.Label(op) + " " + RepLabel(sz.size, rep));
  return Status::Ok();
}

// One repetition at one size: every phase, each contender in turn, then the
// untimed cleanup, so the next repetition finds an empty store.
Status RunPutGetRep(PutGetRun& run, const SizeRun& sz, int rep,
                    std::vector<ContenderSamples>& samples) {
  const size_t n_sides = run.contenders.size();
  // Keys are built before timing; the timed loops only call the backend.
  std::vector<PutGetKeys> keys;
  for (size_t k = 0; k < n_sides; ++k) {
    keys.push_back(MakePutGetKeys(
        run.prefixes[k] + "/s" + std::to_string(sz.size) + "/r" + std::to_string(rep),
        run.o.clients, sz.n, sz.nb * uint64_t(run.batch)));
  }
  for (int phase = 0; phase < kPutGetPhases; ++phase) {
    for (size_t k = 0; k < n_sides; ++k) {
      Status s = RunContenderPhase(run, k, sz, rep, static_cast<Op>(phase), keys[k], samples[k]);
      if (!s.ok()) return s;
    }
  }
  for (size_t k = 0; k < n_sides; ++k) {
    Backend& b = *run.contenders[k].backend;
    for (int c = 0; c < run.o.clients; ++c) {
      b.Remove(c, keys[k].single[size_t(c)]);
      b.Remove(c, keys[k].batched[size_t(c)]);
    }
  }
  if (rep + 1 < run.o.reps) {
    for (const Contender& c : run.contenders) c.backend->Settle();
  }
  return Status::Ok();
}

// The rows of one size: each contender's phases, then the references measured
// beside them.
void AppendSizeRows(const PutGetRun& run, uint64_t size,
                    const std::vector<ContenderSamples>& samples, std::vector<PhaseResult>& out) {
  const bool side_by_side = run.contenders.size() > 1;
  for (size_t k = 0; k < run.contenders.size(); ++k) {
    const Contender& contender = run.contenders[k];
    const size_t first = out.size();
    AppendPutGetRows(contender.backend->system(), size, run.o.clients, run.batch, samples[k].reps,
                     out);
    const bool beside =
        side_by_side || contender.memcpy_beside_gets || contender.stream_beside_batches;
    for (size_t i = first; i < out.size(); ++i) out[i].side_by_side = beside;
    if (contender.memcpy_beside_gets) {
      for (int g = 0; g < 2; ++g) {
        PhaseResult r = Reference("memcpy", g ? "copy_as_batch_get" : "copy_as_get", size,
                                  run.o.clients, samples[k].copies[g]);
        r.batch = g ? run.batch : 1;
        r.side_by_side = true;
        PhaseResult& get = out[first + (g ? 3 : 1)];
        get.paired_ratio = PairedRatio(get, r);
        out.push_back(std::move(r));
      }
    }
    if (contender.stream_beside_batches) {
      for (int g = 0; g < 2; ++g) {
        PhaseResult r = Reference("tcp", g ? "stream_as_batch_get" : "stream_as_batch_put", size,
                                  run.o.clients, samples[k].streams[g]);
        r.side_by_side = true;
        out.push_back(std::move(r));
      }
    }
  }
}

}  // namespace

StatusOr<std::vector<PhaseResult>> RunPutGet(std::span<const Contender> contenders,
                                             const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  PutGetRun run = StartPutGet(contenders, o);
  for (uint64_t size : o.sizes) {
    const uint64_t n = o.OpsFor(size);
    SizeRun sz{size, n, std::max<uint64_t>(kMinBatchCalls, n / uint64_t(run.batch)), {}};
    if (run.any_stream) {
      if (Status s = PrepareStreams(run, sz); !s.ok()) return s;
    }
    std::vector<ContenderSamples> samples(contenders.size());
    for (int rep = 0; rep < o.reps; ++rep) {
      if (Status s = RunPutGetRep(run, sz, rep, samples); !s.ok()) return s;
    }
    AppendSizeRows(run, size, samples, out);
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
