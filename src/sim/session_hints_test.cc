#include "sim/session_hints.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "sim/random_trace_for_test.h"
#include "sim/simulator.h"

namespace crescent::sim {
namespace {

Trace MustParse(const std::string& text) {
  StatusOr<Trace> parsed = ParseTrace(text, "test");
  if (!parsed.ok()) ADD_FAILURE() << parsed.status().ToString();
  return parsed.ok() ? std::move(parsed).value() : Trace{};
}

TEST(LastTurnsTest, ARequestIsALastTurnWhenNoLaterRequestStartsWithAllButItsLastBlock) {
  Trace trace = MustParse(
      "{\"hash_ids\": [1, 2, 3]}\n"     // R0: R2 starts with 1, 2 (its last block differs)
      "{\"hash_ids\": [5, 6, 7]}\n"     // R1: R3 shares 5 only: last
      "{\"hash_ids\": [1, 2, 4, 8]}\n"  // R2: R5 repeats all of it
      "{\"hash_ids\": [5, 9, 7]}\n"     // R3: last
      "{\"hash_ids\": []}\n"            // R4: no blocks, nothing to hint
      "{\"hash_ids\": [1, 2, 4, 8]}\n"  // R5: last (nothing after it)
      "{\"hash_ids\": [9]}\n"           // R6: R7 starts with its only block
      "{\"hash_ids\": [9, 10]}\n"       // R7: last
      "{\"hash_ids\": [2, 3]}\n");      // R8: last; R0's blocks, not R0's prefix
  EXPECT_EQ(LastTurns(trace),
            (std::vector<bool>{false, true, false, true, false, true, false, true, true}));
}

TEST(LastTurnsTest, AnEarlierRequestNeverExtendsALaterOne) {
  Trace trace = MustParse("{\"hash_ids\": [1, 2, 3]}\n{\"hash_ids\": [1]}\n");
  EXPECT_EQ(LastTurns(trace), (std::vector<bool>{true, true}));
}

TEST(SessionHintsTest, FractionPicksAmongLastTurnsBySeed) {
  Trace trace = MustParse(testing::RandomTraceText(5, 600));
  const std::vector<bool> last = LastTurns(trace);
  const auto count = [](const std::vector<bool>& v) {
    return std::count(v.begin(), v.end(), true);
  };
  ASSERT_GT(count(last), 100);
  EXPECT_EQ(SessionHints(trace, 1.0, 7), last);
  EXPECT_EQ(count(SessionHints(trace, 0.0, 7)), 0);
  const std::vector<bool> half = SessionHints(trace, 0.5, 7);
  EXPECT_EQ(half, SessionHints(trace, 0.5, 7));  // pure: same seed, same hints
  EXPECT_NE(half, SessionHints(trace, 0.5, 8));
  for (size_t r = 0; r < half.size(); ++r) EXPECT_TRUE(!half[r] || last[r]) << r;
  EXPECT_GT(count(half), count(last) / 4);
  EXPECT_LT(count(half), 3 * count(last) / 4);
}

SimStats Simulated(const Trace& trace, const std::string& name, uint64_t capacity,
                   const std::vector<bool>& ends) {
  auto policy = MakeSimPolicy(trace, name, {.capacity = capacity});
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return Simulate(trace, capacity, **policy, nullptr, kDefaultKeyPrefix, ends);
}

TEST(SessionHintsTest, HintsChangeTheHitsOfEveryPolicyAndNoHintsChangeNothing) {
  Trace trace = MustParse(testing::RandomTraceText(9, 3000));
  const uint64_t capacity = trace.distinct_blocks() / 20;
  for (const std::string name : {"lru", "s3fifo", "sieve", "prefix-lru", "learned", "adaptive"}) {
    const SimStats plain = Simulated(trace, name, capacity, {});
    EXPECT_EQ(Simulated(trace, name, capacity, SessionHints(trace, 0.0, 1)).hit_blocks,
              plain.hit_blocks)
        << name;
    EXPECT_NE(Simulated(trace, name, capacity, SessionHints(trace, 1.0, 1)).hit_blocks,
              plain.hit_blocks)
        << name;
  }
}

// Multi-turn conversations, 40 open at a time, interleaved: each opens with one of three shared
// system prompts (4 blocks) and adds 2-6 fresh blocks a turn; a turn repeats
// the previous turn's blocks but its last (a partial block, re-hashed) and
// ends the conversation after 1-6 turns.
std::string ConversationsText(uint32_t seed, int requests) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  struct Conversation {
    std::vector<uint64_t> blocks;
    int turns_left;
  };
  std::vector<Conversation> open;
  uint64_t next = 100;
  std::string text;
  for (int r = 0; r < requests; ++r) {
    while (open.size() < 40) {
      const uint64_t prompt = 4 * static_cast<uint64_t>(uniform(0, 2));
      open.push_back({{prompt, prompt + 1, prompt + 2, prompt + 3}, uniform(1, 6)});
    }
    const size_t c = static_cast<size_t>(uniform(0, static_cast<int>(open.size()) - 1));
    std::vector<uint64_t>& blocks = open[c].blocks;
    if (blocks.size() > 4) blocks.pop_back();  // the partial block, re-hashed
    for (int i = uniform(2, 6); i > 0; --i) blocks.push_back(next++);
    text += "{\"hash_ids\": [";
    for (size_t i = 0; i < blocks.size(); ++i) text += (i ? ", " : "") + std::to_string(blocks[i]);
    text += "]}\n";
    if (--open[c].turns_left == 0) open.erase(open.begin() + static_cast<ptrdiff_t>(c));
  }
  return text;
}

TEST(SessionHintsTest, ToldWhichConversationsEndedACacheHitsMore) {
  // Every last turn hinted: its pages go first, so the pages of the
  // conversations that continue stay longer, and the shared system prompts,
  // read again by the next conversation before they are evicted, stay too.
  Trace trace = MustParse(ConversationsText(3, 3000));
  const uint64_t capacity = trace.distinct_blocks() / 20;
  for (const std::string name : {"lru", "prefix-lru", "learned", "adaptive"}) {
    EXPECT_GT(Simulated(trace, name, capacity, SessionHints(trace, 1.0, 1)).hit_blocks,
              Simulated(trace, name, capacity, {}).hit_blocks)
        << name;
  }
}

}  // namespace
}  // namespace crescent::sim
