// The two workload skeletons of `crescent bench`, run against any Backend, so
// Crescent and Redis move the same object sizes with the same client counts,
// batch sizes and keys.
//
// put-get, per object size and repetition, on `clients` threads started
// together: put (one object per call), get, batch put (`batch` objects per
// call), batch get; then the keys are removed, untimed. Every get checks a stamp
// written into the object by its put, so moved bytes are verified bytes.
//
// With Contender::memcpy_beside_gets, each repetition's get and batch_get phases
// are preceded by a memcpy phase of the same shape: the same client threads,
// the same number of calls of the same number of objects of the same size,
// into the same buffer slots (so the destination is as warm for both), out of
// a pre-faulted source region of at least 256 MiB per thread that the copies
// walk through (cold in cache, as an object put 64 MiB earlier is), one plain
// memcpy per object, one thread per client. Its rows are system "memcpy", op
// "copy_as_get" / "copy_as_batch_get"; each get row's paired_ratio is the median
// over repetitions of get GB/s / memcpy GB/s of the same repetition.
//
// Side by side: several contenders (Crescent over TCP, over shared memory,
// Redis) run in one loop, each phase of a repetition by every contender in
// turn before the next phase, so a reference is measured seconds, not
// minutes, from what it is compared with. On a shared VM whose speed drifts
// that matters more than the number of repetitions: each repetition's ratio
// (PairedRatio) cancels the drift, and the median of those ratios is what the
// targets use. A contender with stream_beside_batches has a raw loopback
// stream (baseline.h TcpStreamsOnce: the same clients, each moving as many
// objects of the size as its batch phases, with their cache state) run before
// each of its batch phases: rows system "tcp", op "stream_as_batch_put" (from
// one call's slots into as many distinct objects) and "stream_as_batch_get"
// (back out of them into the slots).
//
// exists, per batch size and miss ratio: each call asks `batch` keys of which
// round(batch × miss) were never stored; every call checks the present count.
// prefix: the same calls as one prefix query each; the stored keys lead, so
// the answer must be their count.
#pragma once

#include <span>
#include <vector>

#include "bench/backend.h"
#include "bench/results.h"
#include "bench/workloads.h"

namespace crescent::bench {

// One system of a side-by-side run, and the references measured beside its
// phases.
struct Contender {
  Backend* backend = nullptr;
  bool memcpy_beside_gets = false;     // a memcpy phase before each get phase
  bool stream_beside_batches = false;  // a raw loopback stream before each batch phase
};

// put, get, batch_put, batch_get for every size (kPutGetPhases rows per size
// and contender, then the references'). Each backend needs options.clients
// connections with buffers; each contender's keys are its own.
StatusOr<std::vector<PhaseResult>> RunPutGet(std::span<const Contender> contenders,
                                             const WorkloadOptions& options);
// exists (op kExists) or prefix (kPrefix) for every batch × miss, the
// backends side by side as in RunPutGet.
StatusOr<std::vector<PhaseResult>> RunExists(std::span<Backend* const> backends,
                                             const WorkloadOptions& options, Op op = Op::kExists);
StatusOr<std::vector<PhaseResult>> RunExists(Backend& backend, const WorkloadOptions& options,
                                             Op op = Op::kExists);

}  // namespace crescent::bench
