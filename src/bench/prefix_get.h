// `crescent bench prefix-get`: repeated prefix gets (Client::GetPrefixInto) of
// one stored chain of pages into a registered buffer, as an engine loads a
// cached prompt prefix, by a client without the location cache (each call
// asks the master: one prefix-mode BatchGetReplicaList, then the reads) and by
// one with it (the leading pages it holds are read straight from their nodes;
// docs/network.md, "Location cache"), side by side.
#pragma once

#include <vector>

#include "bench/crescent_backend.h"
#include "bench/results.h"
#include "bench/workloads.h"

namespace crescent::bench {

// The two clients of one transport: `master` with location_cache 0, `cached`
// with a location cache that holds the chain.
struct PrefixGetSides {
  CrescentBackend* master = nullptr;
  CrescentBackend* cached = nullptr;
};

// Per page size in options.sizes: a chain of options.batch() pages is put
// once (untimed, by the master side) and read once by each side (untimed: the
// cached side's cache fills); then options.reps repetitions, each
// options.CallsFor(options.batch()) prefix gets of the whole chain by one side
// and as many by the other, the order alternating rep by rep. A call that
// returns fewer pages than the chain counts as an error. Rows (side_by_side):
// system the backend's ("crescent-tcp"), op "prefix_get" (the master side)
// then "prefix_get_cached", size the page size, batch the page count, items
// the calls (items/s: calls/s); items_found / items_expected: the pages the
// location cache served (ClientCounters::location_hits) / the pages asked.
StatusOr<std::vector<PhaseResult>> RunPrefixGet(PrefixGetSides sides,
                                                const WorkloadOptions& options);

// The table of RunPrefixGet's rows (any transports), with each cached row's
// calls/s over the master row's, the median of the repetitions' ratios.
std::string RenderPrefixGet(const std::vector<PhaseResult>& rows);
// The target per transport and page size: the cached side's calls/s
// at least 1.5× the master side's (paired, rep by rep).
std::vector<TargetCheck> PrefixGetTargets(const std::vector<PhaseResult>& rows);

}  // namespace crescent::bench
