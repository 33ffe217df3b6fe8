// ReplayReport: what one `crescent replay` run measured, and its two renderings
// (a human table and a JSON object). Pure: formatting only.
//
// Counting rules (docs/replay.md):
//  - hit_pages: the sum over requests of BatchQueryPrefix's answer (the leading
//    pages present when the request was looked up); hit_ratio = hit_pages /
//    page_refs, the hit ratio as README.md ("The hit ratio") defines it.
//  - prefix_pages_got: pages GetPrefixInto actually loaded (≤ hit_pages: a page
//    evicted or unreadable between lookup and get shortens the prefix).
//  - beyond_pages_read: cached pages after the first miss, read to touch them as
//    the simulator does (--beyond-prefix read).
//  - pages_got = prefix_pages_got + beyond_pages_read; bytes_got = pages_got ×
//    page_size. pages_put counts successful puts; bytes_put = pages_put × page_size.
//  - already_present: puts answered OBJECT_ALREADY_EXISTS (another stream stored
//    the page first, or --beyond-prefix skip); not an error.
//  - errors: every other failed call or page, by error code name.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "replay/latency_stats.h"

namespace crescent::replay {

struct PhaseReport {
  LatencySummary latency;  // per request, of the phase's calls together
  uint64_t pages = 0;
  uint64_t bytes = 0;
};

struct ReplayReport {
  // Setup.
  std::string trace;
  std::string master;       // address, or "embedded"
  std::string cluster;      // e.g. "embedded: 1 store node, 2196 pages, lru"
  uint64_t page_size = 0;
  int streams = 1;
  bool max_rate = false;
  double speed = 1.0;
  std::string beyond_prefix = "read";
  uint64_t skipped_lines = 0;

  // Workload.
  uint64_t requests = 0;
  uint64_t page_refs = 0;
  uint64_t distinct_pages = 0;

  // Outcome.
  uint64_t hit_pages = 0;
  uint64_t prefix_pages_got = 0;
  uint64_t beyond_pages_read = 0;
  uint64_t pages_put = 0;
  uint64_t already_present = 0;
  double session_hints = 0;      // the fraction of last turns hinted (setup)
  uint64_t hinted_requests = 0;  // requests hinted as ended (setup)
  uint64_t pages_hinted = 0;     // pages the master marked for those hints
  uint64_t corrupt_pages = 0;
  std::map<std::string, uint64_t> errors;
  double seconds = 0;
  double max_lag_ms = 0;
  PhaseReport lookup, get, touch, put;

  double hit_ratio() const;
  double loaded_hit_ratio() const;  // prefix_pages_got / page_refs
  uint64_t pages_got() const { return prefix_pages_got + beyond_pages_read; }
  uint64_t bytes_got() const { return pages_got() * page_size; }
  uint64_t bytes_put() const { return pages_put * page_size; }
  uint64_t error_count() const;
};

std::string FormatReplayTable(const ReplayReport& report);
std::string FormatReplayJson(const ReplayReport& report);  // one JSON object, pretty

}  // namespace crescent::replay
