#include "cache/radix_tree.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace crescent::cache {
namespace {

using Tree = StringRadixTree<uint64_t>;
using Chains = PageChainRadixTree<uint64_t>;

// All keys under `prefix` in visiting order, as "key=value" strings.
std::vector<std::string> Listing(const Tree& tree, std::string_view prefix = "",
                                 size_t limit = Tree::kNoLimit) {
  std::vector<std::string> out;
  tree.VisitPrefix(
      prefix,
      [&out](std::string_view key, const uint64_t& value) {
        out.push_back(std::string(key) + "=" + std::to_string(value));
        return true;
      },
      limit);
  return out;
}

// A tree built afresh from `keys`; the shape, hence MemoryBytes(), depends
// only on the key set.
size_t FreshMemoryBytes(const std::vector<std::string>& keys) {
  Tree tree;
  for (const std::string& key : keys) tree.Insert(key, 0);
  return tree.MemoryBytes();
}

TEST(RadixTreeTest, EmptyTree) {
  Tree tree;
  EXPECT_EQ(tree.Size(), 0u);
  EXPECT_TRUE(tree.Empty());
  EXPECT_EQ(tree.Find("a"), nullptr);
  EXPECT_FALSE(tree.Contains(""));
  EXPECT_FALSE(tree.LongestPrefixOf("abc").has_value());
  EXPECT_EQ(tree.CountPrefix(""), 0u);
  EXPECT_TRUE(Listing(tree).empty());
  EXPECT_FALSE(tree.Erase("a"));
  EXPECT_EQ(tree.ErasePrefix(""), 0u);
  EXPECT_EQ(tree.CheckInvariants(), "");
}

TEST(RadixTreeTest, InsertSplitsEdgesAndFindsExactKeysOnly) {
  Tree tree;
  const std::vector<std::string> keys = {"romane", "romanus", "romulus",   "rubens",
                                         "ruber",  "rubicon", "rubicundus"};
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(tree.Insert(keys[i], i));
    EXPECT_EQ(tree.CheckInvariants(), "") << keys[i];
  }
  EXPECT_EQ(tree.Size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_NE(tree.Find(keys[i]), nullptr) << keys[i];
    EXPECT_EQ(*tree.Find(keys[i]), i);
  }
  for (const char* absent : {"r", "rom", "roman", "romanes", "rub", "rubicundu", "x", ""}) {
    EXPECT_FALSE(tree.Contains(absent)) << absent;
  }
}

TEST(RadixTreeTest, InsertKeepsAndInsertOrAssignReplaces) {
  Tree tree;
  EXPECT_TRUE(tree.Insert("k", 1));
  EXPECT_FALSE(tree.Insert("k", 2));
  EXPECT_EQ(*tree.Find("k"), 1u);
  EXPECT_FALSE(tree.InsertOrAssign("k", 3));
  EXPECT_EQ(*tree.Find("k"), 3u);
  EXPECT_TRUE(tree.InsertOrAssign("kk", 4));
  EXPECT_EQ(tree.Size(), 2u);
  *tree.Find("kk") = 5;
  EXPECT_EQ(*tree.Find("kk"), 5u);
}

TEST(RadixTreeTest, EraseMergesBackToTheCanonicalShape) {
  Tree tree;
  tree.Insert("abc", 1);
  size_t alone = tree.MemoryBytes();
  tree.Insert("abd", 2);  // splits "abc" into "ab" -> {"c", "d"}
  EXPECT_GT(tree.MemoryBytes(), alone);
  EXPECT_TRUE(tree.Erase("abd"));  // "ab" is left with one child: merged back
  EXPECT_EQ(tree.CheckInvariants(), "");
  EXPECT_EQ(tree.MemoryBytes(), alone);
  EXPECT_EQ(*tree.Find("abc"), 1u);
  EXPECT_FALSE(tree.Erase("abd"));
  EXPECT_FALSE(tree.Erase("ab"));  // a path, not a key
  EXPECT_EQ(tree.Size(), 1u);
}

TEST(RadixTreeTest, KeysThatArePrefixesOfOtherKeys) {
  Tree tree;
  for (const char* key : {"a", "ab", "abc", "abcd"}) tree.Insert(key, std::string(key).size());
  EXPECT_EQ(Listing(tree), (std::vector<std::string>{"a=1", "ab=2", "abc=3", "abcd=4"}));
  EXPECT_TRUE(tree.Erase("ab"));  // "a" -> "b" -> "c" ... merges "b" into "bc"
  EXPECT_EQ(tree.CheckInvariants(), "");
  EXPECT_EQ(tree.MemoryBytes(), FreshMemoryBytes({"a", "abc", "abcd"}));
  EXPECT_TRUE(tree.Erase("abcd"));  // a leaf under a node that keeps its value
  EXPECT_EQ(tree.MemoryBytes(), FreshMemoryBytes({"a", "abc"}));
  EXPECT_TRUE(tree.Erase("a"));
  EXPECT_EQ(tree.MemoryBytes(), FreshMemoryBytes({"abc"}));
  EXPECT_EQ(Listing(tree), (std::vector<std::string>{"abc=3"}));
  EXPECT_EQ(tree.CheckInvariants(), "");
}

TEST(RadixTreeTest, EmptyKeyIsStoredAtTheRoot) {
  Tree tree;
  EXPECT_TRUE(tree.Insert("", 7));
  EXPECT_FALSE(tree.Insert("", 8));
  EXPECT_TRUE(tree.Contains(""));
  tree.Insert("b", 1);
  auto match = tree.LongestPrefixOf("xyz");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->length, 0u);
  EXPECT_EQ(*match->value, 7u);
  EXPECT_EQ(Listing(tree), (std::vector<std::string>{"=7", "b=1"}));
  EXPECT_EQ(tree.CountPrefix(""), 2u);
  EXPECT_TRUE(tree.Erase(""));
  EXPECT_FALSE(tree.Contains(""));
  EXPECT_TRUE(tree.Contains("b"));
  EXPECT_FALSE(tree.LongestPrefixOf("xyz").has_value());
  EXPECT_EQ(tree.CheckInvariants(), "");
}

TEST(RadixTreeTest, LongestPrefixOf) {
  Tree tree;
  tree.Insert("model-a/", 1);
  tree.Insert("model-a/abc", 2);
  tree.Insert("model-a/abcdef", 3);
  tree.Insert("model-b/x", 4);
  EXPECT_FALSE(tree.LongestPrefixOf("model-").has_value());  // ends inside an edge
  EXPECT_FALSE(tree.LongestPrefixOf("model-c/abc").has_value());
  EXPECT_FALSE(tree.LongestPrefixOf("").has_value());
  EXPECT_FALSE(tree.LongestPrefixOf("model-b/").has_value());
  auto expect = [&tree](std::string_view query, size_t length, uint64_t value) {
    auto match = tree.LongestPrefixOf(query);
    ASSERT_TRUE(match.has_value()) << query;
    EXPECT_EQ(match->length, length) << query;
    EXPECT_EQ(*match->value, value) << query;
  };
  expect("model-a/", 8, 1);
  expect("model-a/ab", 8, 1);
  expect("model-a/abc", 11, 2);
  expect("model-a/abcde", 11, 2);
  expect("model-a/abcdef/page-7", 14, 3);
  expect("model-a/abx", 8, 1);
  expect("model-b/xy", 9, 4);
}

TEST(RadixTreeTest, VisitPrefixIsOrderedAndStopsEarly) {
  Tree tree;
  for (const char* key : {"ruber", "romane", "rubens", "romulus", "rubicon", "a", "rom"}) {
    tree.Insert(key, std::string(key).size());
  }
  EXPECT_EQ(Listing(tree), (std::vector<std::string>{"a=1", "rom=3", "romane=6", "romulus=7",
                                                     "rubens=6", "ruber=5", "rubicon=7"}));
  // A prefix that ends inside an edge ("rube" inside "rube|ns").
  EXPECT_EQ(Listing(tree, "rube"), (std::vector<std::string>{"rubens=6", "ruber=5"}));
  EXPECT_EQ(Listing(tree, "ro"), (std::vector<std::string>{"rom=3", "romane=6", "romulus=7"}));
  EXPECT_EQ(Listing(tree, "romulus"), (std::vector<std::string>{"romulus=7"}));
  EXPECT_TRUE(Listing(tree, "romulusx").empty());
  EXPECT_TRUE(Listing(tree, "q").empty());
  EXPECT_EQ(Listing(tree, "r", 2), (std::vector<std::string>{"rom=3", "romane=6"}));
  EXPECT_TRUE(Listing(tree, "r", 0).empty());

  std::vector<std::string> seen;
  size_t visited = tree.VisitPrefix("", [&seen](std::string_view key, const uint64_t&) {
    seen.emplace_back(key);
    return key != "romane";  // stop after this one
  });
  EXPECT_EQ(visited, 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "rom", "romane"}));
}

TEST(RadixTreeTest, BytesOrderAsUnsigned) {
  Tree tree;
  const std::vector<std::string> keys = {
      "\xff", "\x80", "\x7f", std::string(1, '\0'), "\x01", std::string("\x80\x00", 2), "\x80\xff"};
  for (const std::string& key : keys) tree.Insert(key, 0);
  std::vector<std::string> seen;
  tree.VisitPrefix("", [&seen](std::string_view key, const uint64_t&) {
    seen.emplace_back(key);
    return true;
  });
  std::map<std::string, int> model;  // std::string compares bytes as unsigned
  for (const std::string& key : keys) model[key];
  std::vector<std::string> expected;
  expected.reserve(model.size());
  for (const auto& entry : model) expected.push_back(entry.first);
  EXPECT_EQ(seen, expected);
}

std::string KeyP(int c) {
  std::string key = "p";
  key.push_back(static_cast<char>(c));
  return key;
}

TEST(RadixTreeTest, AllByteValuesUnderOneNode) {
  Tree tree;
  std::vector<int> order(256);
  for (int i = 0; i < 256; ++i) order[i] = (i * 167) % 256;  // 167 is odd: a permutation
  for (int c : order) {
    tree.Insert(KeyP(c), c);
    ASSERT_EQ(tree.CheckInvariants(), "") << c;
  }
  std::vector<std::string> listing = Listing(tree, "p");
  ASSERT_EQ(listing.size(), 256u);
  for (int c = 0; c < 256; ++c) EXPECT_EQ(listing[c].substr(3), std::to_string(c));
  for (int c : order) {
    if (c % 3 == 0) continue;
    ASSERT_TRUE(tree.Erase(KeyP(c)));
    ASSERT_EQ(tree.CheckInvariants(), "") << c;
  }
  for (int c = 0; c < 256; ++c) {
    EXPECT_EQ(tree.Contains(KeyP(c)), c % 3 == 0) << c;
  }
}

TEST(RadixTreeTest, CountAndErasePrefix) {
  Tree tree;
  for (const char* key : {"t1/a", "t1/b", "t1/b/c", "t10/a", "t2/a", "t2/b"}) tree.Insert(key, 0);
  EXPECT_EQ(tree.CountPrefix("t1"), 4u);
  EXPECT_EQ(tree.CountPrefix("t1/"), 3u);
  EXPECT_EQ(tree.CountPrefix("t1/b"), 2u);
  EXPECT_EQ(tree.CountPrefix("t"), 6u);
  EXPECT_EQ(tree.CountPrefix("t3"), 0u);
  EXPECT_EQ(tree.ErasePrefix("t1/"), 3u);
  EXPECT_EQ(tree.Size(), 3u);
  EXPECT_EQ(tree.CheckInvariants(), "");
  EXPECT_EQ(tree.MemoryBytes(), FreshMemoryBytes({"t10/a", "t2/a", "t2/b"}));
  EXPECT_EQ(tree.ErasePrefix("t2/a"), 1u);  // a single key: the parent "t" merges
  EXPECT_EQ(tree.MemoryBytes(), FreshMemoryBytes({"t10/a", "t2/b"}));
  EXPECT_EQ(tree.ErasePrefix("x"), 0u);
  EXPECT_EQ(tree.ErasePrefix(""), 2u);
  EXPECT_TRUE(tree.Empty());
  EXPECT_EQ(tree.MemoryBytes(), Tree().MemoryBytes());
}

TEST(RadixTreeTest, ClearAndMove) {
  Tree tree;
  for (int i = 0; i < 100; ++i) tree.Insert("key" + std::to_string(i), i);
  Tree moved(std::move(tree));
  EXPECT_EQ(moved.Size(), 100u);
  EXPECT_EQ(*moved.Find("key42"), 42u);
  EXPECT_TRUE(tree.Empty());  // NOLINT(bugprone-use-after-move): documented as empty
  EXPECT_EQ(tree.CheckInvariants(), "");
  tree.Insert("again", 1);
  tree = std::move(moved);
  EXPECT_EQ(tree.Size(), 100u);
  EXPECT_FALSE(tree.Contains("again"));
  EXPECT_EQ(tree.CheckInvariants(), "");
  tree.Clear();
  EXPECT_TRUE(tree.Empty());
  EXPECT_EQ(tree.MemoryBytes(), Tree().MemoryBytes());
  EXPECT_EQ(tree.CheckInvariants(), "");
}

TEST(RadixTreeTest, OwningValuesAndSets) {
  StringRadixTree<std::string> names;
  names.Insert("b", std::string(100, 'b'));
  names.Insert("bb", std::string(100, 'c'));
  names.Insert("ba", "short");
  EXPECT_TRUE(names.Erase("b"));  // "b" keeps two children; its value is released
  EXPECT_EQ(*names.Find("bb"), std::string(100, 'c'));
  EXPECT_TRUE(names.Erase("ba"));  // "b" merges into "bb", which moves its value
  EXPECT_EQ(*names.Find("bb"), std::string(100, 'c'));

  StringRadixSet set;
  EXPECT_TRUE(set.Insert("x"));
  EXPECT_FALSE(set.Insert("x"));
  EXPECT_TRUE(set.Contains("x"));
  EXPECT_EQ(set.CheckInvariants(), "");
}

TEST(RadixTreeTest, PageChains) {
  Chains tree;
  const uint64_t big = ~uint64_t{0};
  std::vector<uint64_t> chain = {7, 1ull << 63, big, 3};
  for (size_t n = 1; n <= chain.size(); ++n) {
    EXPECT_TRUE(tree.Insert(std::span(chain).first(n), n));
  }
  std::vector<uint64_t> other = {7, 1ull << 63, 5};
  tree.Insert(other, 100);
  std::vector<uint64_t> query = {7, 1ull << 63, big, 3, 9, 9};
  auto match = tree.LongestPrefixOf(query);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->length, 4u);
  EXPECT_EQ(*match->value, 4u);
  std::vector<uint64_t> miss = {8};
  EXPECT_FALSE(tree.LongestPrefixOf(miss).has_value());

  std::vector<std::vector<uint64_t>> seen;
  std::vector<uint64_t> prefix = {7, 1ull << 63};
  tree.VisitPrefix(prefix, [&seen](std::span<const uint64_t> key, const uint64_t&) {
    seen.emplace_back(key.begin(), key.end());
    return true;
  });
  std::vector<std::vector<uint64_t>> expected = {
      {7, 1ull << 63}, {7, 1ull << 63, 5}, {7, 1ull << 63, big}, {7, 1ull << 63, big, 3}};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(tree.CountPrefix(prefix), 4u);
  EXPECT_EQ(tree.CheckInvariants(), "");
}

TEST(RadixTreeTest, DeepChainIsBuiltWalkedAndFreed) {
  // One node per page: the tree is as deep as the chain.
  constexpr size_t kDepth = 3000;
  Chains tree;
  std::vector<uint64_t> chain(kDepth);
  for (size_t i = 0; i < kDepth; ++i) chain[i] = i * 0x9e3779b97f4a7c15ull;
  for (size_t n = 1; n <= kDepth; ++n) tree.Insert(std::span(chain).first(n), n);
  EXPECT_EQ(tree.Size(), kDepth);
  EXPECT_EQ(tree.CountPrefix(std::span(chain).first(1)), kDepth);
  EXPECT_EQ(tree.LongestPrefixOf(chain)->length, kDepth);
  EXPECT_EQ(tree.CheckInvariants(), "");
  EXPECT_EQ(tree.ErasePrefix(std::span(chain).first(kDepth / 2)), kDepth - kDepth / 2 + 1);
  EXPECT_EQ(tree.CheckInvariants(), "");
}

// ---------------------------------------------------------------------------
// Randomised differential test against std::map. Keys are drawn from a small
// alphabet and are short, so keys are often prefixes of one another and edges
// split and merge all the time.

template <typename Symbol>
class ModelTest {
 public:
  using TreeType = RadixTree<Symbol, uint64_t>;
  using Key = std::vector<Symbol>;

  ModelTest(std::vector<Symbol> alphabet, size_t max_len, uint64_t seed)
      : alphabet_(std::move(alphabet)), max_len_(max_len), rng_(seed) {}

  void Run(int ops) {
    for (int op = 0; op < ops; ++op) {
      Step();
      ASSERT_EQ(tree_.Size(), model_.size()) << "op " << op;
      if (op % 2000 == 0) Check(op);
      if (::testing::Test::HasFatalFailure()) return;
    }
    Check(ops);
  }

 private:
  static typename TreeType::KeyView View(const Key& key) {
    if constexpr (TreeType::kByteKeys) {
      return {reinterpret_cast<const char*>(key.data()), key.size()};
    } else {
      return {key.data(), key.size()};
    }
  }
  static bool StartsWith(const Key& key, const Key& prefix) {
    return key.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), key.begin());
  }

  Key RandomKey(size_t max_len) {
    Key key(std::uniform_int_distribution<size_t>(0, max_len)(rng_));
    for (Symbol& s : key) s = alphabet_[rng_() % alphabet_.size()];
    return key;
  }

  void Step() {
    Key key = RandomKey(max_len_);
    TreeType& tree = tree_;
    switch (rng_() % 16) {
      case 0:
      case 1:
      case 2:
      case 3: {
        uint64_t value = rng_();
        bool is_new = model_.emplace(key, value).second;
        ASSERT_EQ(tree.Insert(View(key), value), is_new);
        break;
      }
      case 4: {
        uint64_t value = rng_();
        bool is_new = model_.insert_or_assign(key, value).second;
        ASSERT_EQ(tree.InsertOrAssign(View(key), value), is_new);
        break;
      }
      case 5:
      case 6:
      case 7: ASSERT_EQ(tree.Erase(View(key)), model_.erase(key) == 1); break;
      case 8: {  // rare, with a longer prefix, so the tree does not empty too often
        Key prefix = RandomKey(max_len_);
        if (prefix.size() < max_len_ / 2 + 1) break;
        size_t n = 0;
        for (auto it = model_.lower_bound(prefix);
             it != model_.end() && StartsWith(it->first, prefix);) {
          it = model_.erase(it);
          ++n;
        }
        ASSERT_EQ(tree.ErasePrefix(View(prefix)), n);
        break;
      }
      case 9:
      case 10: {
        auto it = model_.find(key);
        const uint64_t* found = tree.Find(View(key));
        ASSERT_EQ(found != nullptr, it != model_.end());
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second);
        }
        break;
      }
      case 11:
      case 12: {
        std::optional<typename TreeType::Match> match = tree.LongestPrefixOf(View(key));
        std::optional<std::pair<size_t, uint64_t>> expected;
        for (size_t len = key.size() + 1; len-- > 0;) {
          auto it = model_.find(Key(key.begin(), key.begin() + len));
          if (it != model_.end()) {
            expected.emplace(len, it->second);
            break;
          }
        }
        ASSERT_EQ(match.has_value(), expected.has_value());
        if (match) {
          ASSERT_EQ(match->length, expected->first);
          ASSERT_EQ(*match->value, expected->second);
        }
        break;
      }
      case 13: {
        size_t n = 0;
        for (auto it = model_.lower_bound(key); it != model_.end() && StartsWith(it->first, key);
             ++it)
          ++n;
        ASSERT_EQ(tree.CountPrefix(View(key)), n);
        break;
      }
      default: {  // VisitPrefix with a random limit or early stop
        Key prefix = RandomKey(max_len_ / 2);
        size_t limit = rng_() % 2 == 0 ? TreeType::kNoLimit : rng_() % 20;
        if (prefix.empty()) limit = std::min<size_t>(limit, rng_() % 100);  // whole tree: cap
        size_t stop_after = rng_() % 3 == 0 ? rng_() % 20 : TreeType::kNoLimit;
        std::vector<std::pair<Key, uint64_t>> seen;
        size_t visited = tree.VisitPrefix(
            View(prefix),
            [&](typename TreeType::KeyView k, const uint64_t& value) {
              seen.emplace_back(Key(reinterpret_cast<const Symbol*>(k.data()),
                                    reinterpret_cast<const Symbol*>(k.data()) + k.size()),
                                value);
              return seen.size() < stop_after;
            },
            limit);
        std::vector<std::pair<Key, uint64_t>> expected;
        size_t cap = std::min(limit, std::max<size_t>(stop_after, 1));  // the call that
        // returns false still counts
        for (auto it = model_.lower_bound(prefix);
             it != model_.end() && StartsWith(it->first, prefix) && expected.size() < cap; ++it) {
          expected.emplace_back(it->first, it->second);
        }
        ASSERT_EQ(visited, seen.size());
        ASSERT_EQ(seen, expected);
        break;
      }
    }
  }

  void Check(int op) {
    ASSERT_EQ(tree_.CheckInvariants(), "") << "op " << op;
    TreeType fresh;
    for (const auto& [key, value] : model_) fresh.Insert(View(key), value);
    ASSERT_EQ(tree_.MemoryBytes(), fresh.MemoryBytes()) << "op " << op;
  }

  std::vector<Symbol> alphabet_;
  size_t max_len_;
  std::mt19937_64 rng_;
  // std::less on vectors trips a GCC 12 -Wstringop-overread false positive.
  struct Less {
    bool operator()(const Key& a, const Key& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  std::map<Key, uint64_t, Less> model_;
  TreeType tree_;
};

// Few symbols, long keys: deep trees, many splits and merges.
TEST(RadixTreeModelTest, ByteStringsAgainstStdMap) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    ModelTest<unsigned char>({'a', 'b', 'c', 0xfe}, 6, seed).Run(50000);
    if (HasFatalFailure()) return;
  }
}

// Many symbols, short keys: wide nodes whose child arrays grow and shrink in place.
TEST(RadixTreeModelTest, WideByteNodesAgainstStdMap) {
  std::vector<unsigned char> alphabet;
  alphabet.reserve(20);
  for (int c = 0; c < 20; ++c) alphabet.push_back(static_cast<unsigned char>(c * 12 + 7));
  ModelTest<unsigned char>(alphabet, 3, 4).Run(60000);
}

TEST(RadixTreeModelTest, PageChainsAgainstStdMap) {
  for (uint64_t seed : {11, 12}) {
    SCOPED_TRACE(seed);
    ModelTest<uint64_t>({1, 2, 1ull << 40, ~uint64_t{0}}, 6, seed).Run(50000);
    if (HasFatalFailure()) return;
  }
  std::vector<uint64_t> wide;
  for (uint64_t i = 0; i < 20; ++i) wide.push_back(i * 0x9e3779b97f4a7c15ull);
  ModelTest<uint64_t>(wide, 3, 13).Run(50000);
}

}  // namespace
}  // namespace crescent::cache
