// PageFacts and PageClass: what the learned policy knows about a page, and the
// class that its reuse statistics are kept under.
//
// Every fact is one the master has at put or read time, with no clock and no
// trace-specific constant in it:
//  - reused:     the page's key was referenced within the recent-key window
//                before this copy was written (RecentKeys), or it has been read
//                since: a conversation that continued, a prompt that came back;
//  - readers:    reads since it was written (0, 1, 2 or more); the master counts
//                one per coalesced read touch, so this is about the number of
//                reading requests, not of bytes read;
//  - write end:  it was the last page of the write that stored it (often a
//                partial block that no later request shares);
//  - depth:      its position in its chain (0-3, 4-15, 16-63, 64 or more);
//  - extensions: how many times a page was appended to the chain at this page
//                (0, 1, 2 or more).
// A policy picks the facts its classes are made of with a PageFeature mask;
// the others are still kept, so a mask can change without losing state.
#pragma once

#include <cstdint>

namespace crescent::cache {

enum PageFeature : uint32_t {
  kReused = 1u << 0,
  kReaders = 1u << 1,
  kWriteEnd = 1u << 2,
  kDepth = 1u << 3,
  kExtensions = 1u << 4,
  kAllPageFeatures = (1u << 5) - 1,
};

// Reuse and write end: the two facts that pay on every workload measured
// (docs/adaptive.md); the others split the statistics into classes too sparse
// to learn from in a short trace, so the adaptive policy tries them as a
// separate candidate.
inline constexpr uint32_t kDefaultPageFeatures = kReused | kWriteEnd;

struct PageFacts {
  uint8_t depth = 0;       // saturates at 255
  uint8_t reads = 0;       // saturates at 255
  uint8_t extensions = 0;  // saturates at 255
  bool seen_before = false;
  bool ends_write = false;
};

// Classes are a mixed-radix number over the facts a mask selects; the class of
// a page with the same facts under the "reused" fact alone (its coarse class)
// is 0 or 1. kPageClasses bounds every mask.
inline constexpr int kPageClasses = 2 * 3 * 2 * 4 * 3;

inline uint8_t ReusedBit(const PageFacts& f) { return f.seen_before || f.reads > 0 ? 1 : 0; }

inline uint8_t PageClass(const PageFacts& f, uint32_t features) {
  int cls = (features & kReused) ? ReusedBit(f) : 0;
  if (features & kReaders) cls = cls * 3 + (f.reads >= 2 ? 2 : f.reads);
  if (features & kWriteEnd) cls = cls * 2 + (f.ends_write ? 1 : 0);
  if (features & kDepth)
    cls = cls * 4 + (f.depth < 4 ? 0 : f.depth < 16 ? 1 : f.depth < 64 ? 2 : 3);
  if (features & kExtensions) cls = cls * 3 + (f.extensions >= 2 ? 2 : f.extensions);
  return static_cast<uint8_t>(cls);
}

// The coarse class every class of `features` falls back to while it has few
// observations of its own: the reused fact alone, or 0 without it.
inline uint8_t CoarseClassOf(uint8_t cls, uint32_t features) {
  if (!(features & kReused)) return 0;
  int divisor = 1;
  if (features & kReaders) divisor *= 3;
  if (features & kWriteEnd) divisor *= 2;
  if (features & kDepth) divisor *= 4;
  if (features & kExtensions) divisor *= 3;
  return static_cast<uint8_t>(cls / divisor);
}

}  // namespace crescent::cache
