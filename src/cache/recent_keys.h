// RecentKeys: "was this key referenced recently?", for keys that may no longer
// be cached. The learned policy asks it when a page is written: a key that
// comes back soon after its eviction is a reused page, not a new one.
//
// Two Bloom filters, current and previous, each sized for `window` keys. Add()
// puts a key in the current filter; once the current filter has taken `window`
// keys it becomes the previous one and a cleared filter takes its place
// (TinyLFU's doorkeeper ages the same way). So a key is remembered for at
// least `window` and at most 2 × `window` later additions, and Contains() may
// also say yes for a key never added (false positives, about 0.005% with both
// filters full: blocked filters of 32 bits and 7 probes per key,
// recent_keys.cc), never no for one added within the last `window`. A false
// positive makes the learned policy count a new page as reused, and it rates
// those several times higher, so the filter is sized for very few of them.
//
// Memory: 2 filters × 32 bits × window, i.e. 8 bytes per key of window. The
// window follows Resize() (the learned policy passes 4 × its object count); a
// filter is replaced when it has taken the keys it was sized for, and its
// successor is sized for the window of that moment.
// No call pauses, however big the filters: each is a ZeroedBlock, so the
// cleared successor is a fresh zero-filled mapping (nothing written), and the
// dropped previous filter is handed back 64 KiB per Add (all of it within
// 1/16384 of a window) instead of being cleared or unmapped at once; Add runs
// under the master's policy lock.
// Not thread-safe.
#pragma once

#include <cstdint>

#include "cache/zeroed_block.h"

namespace crescent::cache {

class RecentKeys {
 public:
  explicit RecentKeys(uint64_t window = 1024);

  // `hash` must be a well-mixed 64-bit hash of the key.
  bool Contains(uint64_t hash) const;
  void Add(uint64_t hash);
  // Starts loading the block that Add(hash) writes (a hint).
  void Prefetch(uint64_t hash) const;
  void Resize(uint64_t window);

 private:
  // A filter's words, in 512-bit blocks.
  struct Filter {
    ZeroedBlock block;
    uint64_t words = 0;
    const uint64_t* data() const { return static_cast<const uint64_t*>(block.data()); }
    uint64_t* data() { return static_cast<uint64_t*>(block.data()); }
  };
  static Filter MakeFilter(uint64_t words);
  static bool Test(const Filter& bits, uint64_t hash);
  static void Set(Filter& bits, uint64_t hash);
  void Rotate();
  // Hands back the next part of retired_.
  void ReleaseSome();

  uint64_t window_;
  uint64_t current_window_;  // the keys current_ was sized for
  uint64_t added_ = 0;       // keys added to current_ since it was cleared
  Filter current_;
  Filter previous_;
  Filter retired_;             // the previous filter before the last Rotate()
  uint64_t retired_done_ = 0;  // its bytes handed back so far
};

}  // namespace crescent::cache
