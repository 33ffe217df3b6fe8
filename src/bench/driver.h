// The two workload skeletons of `crescent bench`, run against any Backend, so
// Crescent and Redis move the same object sizes with the same client counts,
// batch sizes and keys.
//
// put-get, per object size and repetition, on `clients` threads started
// together: put (one object per call), get, batch put (`batch` objects per
// call), batch get; then the keys are removed, untimed. Every get checks a stamp
// written into the object by its put, so moved bytes are verified bytes.
//
// With options.memcpy_beside_gets, each repetition's get and batch_get phases
// are preceded by a memcpy phase of the same shape: the same client threads,
// the same number of calls of the same number of objects of the same size,
// into the same buffer slots (so the destination is as warm for both), out of
// a pre-faulted source region of at least 256 MiB per thread that the copies
// walk through (cold in cache, as an object put 64 MiB earlier is), one plain
// memcpy per object, one thread per client. Its rows are system "memcpy", op
// "copy_as_get" / "copy_as_batch_get"; each get row's paired_ratio is the median
// over repetitions of get GB/s / memcpy GB/s of the same repetition.
//
// exists, per batch size and miss ratio: each call asks `batch` keys of which
// round(batch × miss) were never stored; every call checks the present count.
// prefix: the same calls as one prefix query each; the stored keys lead, so
// the answer must be their count.
#pragma once

#include <vector>

#include "bench/backend.h"
#include "bench/results.h"
#include "bench/workloads.h"

namespace crescent::bench {

// put, get, batch_put, batch_get for every size (kPutGetPhases rows per size).
// The backend needs options.clients connections with buffers.
StatusOr<std::vector<PhaseResult>> RunPutGet(Backend& backend, const WorkloadOptions& options);
// exists (op kExists) or prefix (kPrefix) for every batch × miss.
StatusOr<std::vector<PhaseResult>> RunExists(Backend& backend, const WorkloadOptions& options,
                                             Op op = Op::kExists);

}  // namespace crescent::bench
