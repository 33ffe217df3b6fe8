// Replayer: drives a live cluster with a Plan, as an inference engine would.
// For each request, in arrival order across `streams` concurrent workers
// (ArrivalSequencer: request i's lookup is answered before request i+1 is
// taken):
//   1. lookup: BatchQueryPrefix(keys) → h, the leading pages stored (the hit);
//   2. get:    GetPrefixInto(keys[0, h)) into the stream's registered buffer;
//   3. touch:  (--beyond-prefix read) BatchGetInto(keys[h, n)): the pages after
//              the first miss that are stored anyway are read, which touches
//              them in the eviction policy exactly as the simulator accesses
//              every cached block of a request; the others answer NOT_FOUND;
//   4. put:    the missing pages are put from the buffer with chain=true (page
//              i's parent is page i-1), one chain per run of consecutive
//              missing pages. With --beyond-prefix skip, step 3 is left out and
//              keys[h, n) are put as one chain; the stored ones answer
//              OBJECT_ALREADY_EXISTS, which is counted, not an error.
// Failures are counted by error code and never stop the replay (a put that
// finds no space is an error count, not a fatal one).
//
// Each page's first 8 bytes are its hash id; pages read back are checked and a
// mismatch is counted as corrupt_pages.
#pragma once

#include <cstdint>
#include <functional>

#include "crescent/client.h"
#include "crescent/status.h"
#include "replay/replay_plan.h"
#include "replay/replay_report.h"

namespace crescent::replay {

enum class BeyondPrefix { kRead, kSkip };

struct ReplayOptions {
  uint64_t page_size = 64 * 1024;  // ≥ 8
  int streams = 1;
  BeyondPrefix beyond_prefix = BeyondPrefix::kRead;
  // Called from the calling thread every ~200 ms with (requests done, total).
  std::function<void(uint64_t, uint64_t)> progress;
};

// Fills the outcome fields of a ReplayReport (the caller fills the setup ones).
// Errors: kInvalidArgument for bad options; a buffer registration failure.
StatusOr<ReplayReport> RunReplay(Client& client, const Plan& plan, const ReplayOptions& options);

}  // namespace crescent::replay
