#include "bench/prefix_get.h"

#include <string>

#include "bench/round_trips.h"

namespace crescent::bench {

namespace {

inline constexpr double kPrefixGetTarget = 1.5;

// One side's calls of one repetition, into `rep`.
RepSample TimeSide(CrescentBackend& side, const std::vector<std::string>& keys,
                   const std::vector<void*>& bufs, uint64_t size, uint64_t calls) {
  const uint64_t hits_before = side.Counters(0).location_hits;
  RepSample s = TimeCalls(calls, 0, [&]() -> Status {
    StatusOr<size_t> got = side.GetPrefix(0, keys, bufs, size);
    if (!got.ok()) return got.status();
    if (*got != keys.size()) {
      return Status(ErrorCode::kInternal, "a prefix get returned " + std::to_string(*got) + " of " +
                                              std::to_string(keys.size()) + " pages");
    }
    return Status::Ok();
  });
  const uint64_t pages = keys.size();
  s.bytes_requested = calls * pages * size;
  s.bytes_moved = (calls - s.errors) * pages * size;
  s.items_expected = calls * pages;
  s.items_found = side.Counters(0).location_hits - hits_before;
  return s;
}

PhaseResult Row(const CrescentBackend& side, const char* op, uint64_t size, int pages,
                const std::vector<RepSample>& reps) {
  PhaseResult r;
  r.system = side.system();
  r.op = op;
  r.size = size;
  r.batch = pages;
  r.side_by_side = true;
  return Summarize(r, reps);
}

std::string Transport(const PhaseResult& r) {
  return r.system.substr(r.system.find('-') + 1);  // "crescent-tcp" -> "tcp"
}

}  // namespace

StatusOr<std::vector<PhaseResult>> RunPrefixGet(PrefixGetSides sides, const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  const int pages = o.batch();
  const uint64_t calls = o.CallsFor(uint64_t(pages));
  CrescentBackend* order[2] = {sides.master, sides.cached};
  for (uint64_t size : o.sizes) {
    std::vector<std::string> keys;
    const std::string base =
        RunPrefix() + "/prefix-get/" + sides.master->system() + "/" + std::to_string(size) + "/";
    for (int i = 0; i < pages; ++i) keys.push_back(base + std::to_string(i));
    std::vector<void*> put_bufs, bufs[2];
    for (int i = 0; i < pages; ++i) {
      put_bufs.push_back(sides.master->buffer(0) + uint64_t(i) * size);
      for (int side = 0; side < 2; ++side)
        bufs[side].push_back(order[side]->buffer(0) + uint64_t(i) * size);
    }
    for (const Status& s : sides.master->Put(0, keys, put_bufs, size, true)) {
      if (!s.ok()) return s;
    }
    std::vector<RepSample> reps[2];
    for (int side = 0; side < 2; ++side) {  // untimed: the cached side remembers the chain
      (void)TimeSide(*order[side], keys, bufs[side], size, 1);
    }
    for (int rep = 0; rep < o.reps; ++rep) {
      for (int i = 0; i < 2; ++i) {
        const int side = (i + rep) % 2;  // master first in even reps, cached first in odd
        reps[side].push_back(TimeSide(*order[side], keys, bufs[side], size, calls));
      }
      if (o.on_phase) {
        o.on_phase("prefix get " + sides.master->system() + " " + FormatBytes(size) + ", rep " +
                   std::to_string(rep + 1));
      }
    }
    out.push_back(Row(*sides.master, "prefix_get", size, pages, reps[0]));
    out.push_back(Row(*sides.cached, "prefix_get_cached", size, pages, reps[1]));
    sides.master->Remove(0, keys);
  }
  return out;
}

std::string RenderPrefixGet(const std::vector<PhaseResult>& rows) {
  Table t({"transport", "page", "pages", "location cache", "calls/s", "GB/s", "p50 µs", "p99 µs",
           "from cache", "on ÷ off", "p50 off ÷ on"});
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const PhaseResult& off = rows[i];
    const PhaseResult& on = rows[i + 1];
    for (const PhaseResult* r : {&off, &on}) {
      const double cached =
          r->items_expected > 0 ? double(r->items_found) / double(r->items_expected) : 0;
      t.AddRow({Transport(*r), FormatBytes(r->size), std::to_string(r->batch),
                r == &on ? "on" : "off (master)", Count(r->items_per_s), Fixed(r->gb_per_s, 2),
                Fixed(r->p50_us, 1), Fixed(r->p99_us, 1), Fixed(100 * cached, 0) + "%",
                r == &on ? Fixed(PairedRatio(on, off, true), 2) : "",
                r == &on && on.p50_us > 0 ? Fixed(off.p50_us / on.p50_us, 2) : ""});
    }
  }
  return t.Render() +
         "calls/s and p50/p99 per call are medians over the repetitions; on ÷ off is the median "
         "of the repetitions' calls/s ratios (the sides alternate, rep by rep), so a stall of the "
         "machine's in one side's calls moves it; p50 off ÷ on: the ratio of the two p50s; from "
         "cache: the pages the location cache served\n";
}

std::vector<TargetCheck> PrefixGetTargets(const std::vector<PhaseResult>& rows) {
  std::vector<TargetCheck> out;
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const PhaseResult& off = rows[i];
    const PhaseResult& on = rows[i + 1];
    TargetCheck c;
    c.name = Transport(on) + " prefix get of " + std::to_string(on.batch) + " cached pages of " +
             FormatBytes(on.size) + ", location cache on vs off (the master path)";
    c.ours = on.items_per_s;
    c.reference = off.items_per_s;
    c.unit = "calls/s";
    c.target = kPrefixGetTarget;
    c.paired = PairedRatio(on, off, true);
    out.push_back(c);
  }
  return out;
}

}  // namespace crescent::bench
