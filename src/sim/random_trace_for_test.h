// Test helper (header only, used by *_test.cc): deterministic random traces
// with the shape of real ones, as Mooncake JSONL text. Each request either
// extends a random prefix of an earlier request with fresh blocks (multi-turn
// and shared prompts) or is fresh throughout, and now and then reuses a random
// old block out of prefix order, so the prefix rule matters.
//
// With `ends_with_write`, every request ends with at least one fresh block and
// holds no block twice (the old block, when not in it yet, goes before the
// fresh ones): replayed through the master, every request then ends with a
// put, which flushes its deferred touches, so no two reads of one page are
// ever coalesced into one touch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sim/trace_reader.h"

namespace crescent::sim::testing {

// `text` parsed as a trace named "test"; a parse error fails the test.
inline Trace MustParse(const std::string& text) {
  auto trace = ParseTrace(text, "test");
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  return trace.ok() ? std::move(*trace) : Trace{};
}

inline std::string RandomTraceText(uint32_t seed, int requests, bool ends_with_write = false) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<std::vector<uint64_t>> history;
  uint64_t next_id = 0;
  std::string text;
  for (int r = 0; r < requests; ++r) {
    std::vector<uint64_t> ids;
    if (!history.empty() && uniform(0, 9) < 7) {
      const auto& base = history[uniform(0, static_cast<int>(history.size()) - 1)];
      if (!base.empty()) {
        ids.assign(base.begin(), base.begin() + uniform(1, static_cast<int>(base.size())));
      }
    }
    if (ends_with_write) {
      if (next_id > 0 && uniform(0, 9) == 0) {
        const uint64_t old = uniform(0, static_cast<int>(next_id) - 1);
        if (std::find(ids.begin(), ids.end(), old) == ids.end()) ids.push_back(old);
      }
      const int fresh = uniform(1, 6);
      for (int i = 0; i < fresh; ++i) ids.push_back(next_id++);
    } else {
      const int fresh = uniform(0, 6);
      for (int i = 0; i < fresh; ++i) ids.push_back(next_id++);
      if (next_id > 0 && uniform(0, 9) == 0) {
        ids.push_back(uniform(0, static_cast<int>(next_id) - 1));
      }
    }
    history.push_back(ids);

    text += "{\"timestamp\": " + std::to_string(r) + ", \"hash_ids\": [";
    for (size_t i = 0; i < ids.size(); ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
    text += "]}\n";
  }
  return text;
}

}  // namespace crescent::sim::testing
