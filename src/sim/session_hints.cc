#include "sim/session_hints.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <random>
#include <utility>

namespace crescent::sim {

std::vector<bool> LastTurns(const Trace& trace) {
  // A trie of the block sequences of the requests after the current one,
  // built from the end of the trace backwards: node 0 is the empty prefix,
  // and (node, block) -> the node of the prefix one block longer. The blocks
  // a request shares with some later one are the depth of its walk down the
  // trie before it adds a node.
  absl::flat_hash_map<std::pair<uint32_t, BlockId>, uint32_t> trie;
  uint32_t nodes = 1;
  std::vector<bool> last(trace.requests.size(), false);
  for (size_t r = trace.requests.size(); r-- > 0;) {
    const auto blocks = trace.BlocksOf(trace.requests[r]);
    uint32_t node = 0;
    size_t shared = 0;  // leading blocks some later request starts with too
    bool sharing = true;
    for (const BlockId block : blocks) {
      auto [it, added] = trie.try_emplace({node, block}, nodes);
      if (added) {
        ++nodes;
        sharing = false;
      }
      if (sharing) ++shared;
      node = it->second;
    }
    // Extended: a later request starts with every block but the last (and
    // with the only block of a one-block request).
    last[r] = !blocks.empty() && shared < std::max<size_t>(1, blocks.size() - 1);
  }
  return last;
}

std::vector<bool> SessionHints(const Trace& trace, double fraction, uint64_t seed) {
  std::vector<bool> hints = LastTurns(trace);
  fraction = std::clamp(fraction, 0.0, 1.0);
  std::mt19937_64 random(seed);
  // One draw per request, hinted or not, so a request's draw does not depend
  // on which requests before it are last turns.
  for (size_t r = 0; r < hints.size(); ++r) {
    const double draw = static_cast<double>(random() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    hints[r] = hints[r] && draw < fraction;
  }
  return hints;
}

}  // namespace crescent::sim
