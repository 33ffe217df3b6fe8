// KeyIndex against a std::map oracle: inserts, erases, prefix visits and the
// stored prefixes of a key (VisitPrefixesOf) over keys drawn from a tiny
// alphabet, so prefixes of each other and long shared runs (the hard cases of
// a crit-bit tree) are common.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "master/key_index.h"

namespace crescent::master {
namespace {

struct Fixture {
  std::vector<std::string> keys;  // slot -> key
  KeyIndex index;
  std::map<std::string, uint32_t> oracle;
  auto KeyOf() const {
    return [this](uint32_t slot) { return std::string_view(keys[slot]); };
  }
  // Indexes a key not stored yet under a new slot, in the oracle too.
  bool Insert(const std::string& k) {
    const auto slot = static_cast<uint32_t>(keys.size());
    keys.push_back(k);
    oracle[k] = slot;
    return index.Insert(slot, k, KeyOf());
  }
  // The slots a visit offers, until `limit` of them.
  template <typename Visit>
  static std::vector<uint32_t> Collect(size_t limit, const Visit& visit) {
    std::vector<uint32_t> out;
    visit([&](uint32_t slot) {
      out.push_back(slot);
      return out.size() < limit;
    });
    return out;
  }
  std::vector<uint32_t> Visit(std::string_view prefix, size_t limit = ~size_t{0}) const {
    return Collect(limit, [&](auto fn) { index.VisitPrefix(prefix, KeyOf(), fn); });
  }
  std::vector<uint32_t> VisitAfter(std::string_view prefix, std::string_view after,
                                   size_t limit = ~size_t{0}) const {
    return Collect(limit, [&](auto fn) { index.VisitPrefixAfter(prefix, after, KeyOf(), fn); });
  }
  std::vector<uint32_t> PrefixesOf(std::string_view key, size_t min_length = 0,
                                   size_t limit = ~size_t{0}) const {
    return Collect(limit, [&](auto fn) { index.VisitPrefixesOf(key, min_length, KeyOf(), fn); });
  }
  // The stored keys that prefix `key`, longer than min_length, longest first.
  std::vector<uint32_t> ExpectedPrefixesOf(std::string_view key, size_t min_length = 0,
                                           size_t limit = ~size_t{0}) const {
    std::vector<uint32_t> out;
    for (size_t n = key.size(); n > min_length && out.size() < limit; --n) {
      auto it = oracle.find(std::string(key.substr(0, n)));
      if (it != oracle.end()) out.push_back(it->second);
    }
    return out;
  }
  std::vector<uint32_t> Expected(std::string_view prefix, size_t limit = ~size_t{0}) const {
    std::vector<uint32_t> out;
    for (auto it = oracle.lower_bound(std::string(prefix));
         it != oracle.end() && it->first.starts_with(prefix) && out.size() < limit; ++it) {
      out.push_back(it->second);
    }
    return out;
  }
  std::vector<uint32_t> ExpectedAfter(std::string_view prefix, std::string_view after,
                                      size_t limit = ~size_t{0}) const {
    std::vector<uint32_t> out;
    for (auto it = oracle.upper_bound(std::string(after)); it != oracle.end() && out.size() < limit;
         ++it) {
      if (it->first.starts_with(prefix)) out.push_back(it->second);
    }
    return out;
  }
};

std::string RandomKey(std::mt19937& rng) {
  static const char kAlphabet[] = {'a', 'b', '\0', '\xff', '/'};
  std::string k(rng() % 6, 'a');
  for (char& c : k) c = kAlphabet[rng() % 5];
  return k;
}

TEST(KeyIndexTest, MatchesOrderedOracle) {
  std::mt19937 rng(7);
  Fixture f;
  for (int step = 0; step < 20000; ++step) {
    std::string k = RandomKey(rng);
    auto it = f.oracle.find(k);
    if (it == f.oracle.end()) {
      ASSERT_TRUE(f.Insert(k));
    } else if (rng() % 2 == 0) {
      EXPECT_FALSE(f.index.Insert(static_cast<uint32_t>(f.keys.size()), k, f.KeyOf()));
    } else {
      ASSERT_TRUE(f.index.Erase(it->second, k));
      EXPECT_FALSE(f.index.Erase(it->second, k));
      f.oracle.erase(it);
    }
    ASSERT_EQ(f.index.size(), f.oracle.size());
    if (step % 50 == 0) {
      std::string p = RandomKey(rng);
      p.resize(std::min<size_t>(p.size(), rng() % 4));
      ASSERT_EQ(f.Visit(p), f.Expected(p)) << "prefix of " << p.size() << " bytes";
      ASSERT_EQ(f.Visit(p, 3), f.Expected(p, 3));
      // The stored keys that prefix a key (the key itself among them).
      const std::string q = RandomKey(rng) + RandomKey(rng);
      const size_t min = rng() % 3;
      ASSERT_EQ(f.PrefixesOf(q), f.ExpectedPrefixesOf(q)) << "key of " << q.size() << " bytes";
      ASSERT_EQ(f.PrefixesOf(q, min), f.ExpectedPrefixesOf(q, min));
      ASSERT_EQ(f.PrefixesOf(q, 0, 1), f.ExpectedPrefixesOf(q, 0, 1));
      // Pages after a stored key and after keys that are not stored, inside,
      // before and past the prefix's range.
      for (int i = 0; i < 4; ++i) {
        std::string after = i == 0 && !f.oracle.empty() ? f.oracle.begin()->first : RandomKey(rng);
        if (i == 1) after = p + after;
        ASSERT_EQ(f.VisitAfter(p, after), f.ExpectedAfter(p, after))
            << "prefix of " << p.size() << " bytes, after " << after.size() << " bytes";
        ASSERT_EQ(f.VisitAfter(p, after, 2), f.ExpectedAfter(p, after, 2));
      }
    }
  }
  EXPECT_EQ(f.Visit(""), f.Expected(""));
}

TEST(KeyIndexTest, PrefixesOfNamedCases) {
  Fixture f;
  EXPECT_TRUE(f.PrefixesOf("abc").empty());
  f.keys = {"a", "ab", "abcd", "b", "abx"};
  for (uint32_t slot = 0; slot < f.keys.size(); ++slot) {
    ASSERT_TRUE(f.index.Insert(slot, f.keys[slot], f.KeyOf()));
  }
  EXPECT_EQ(f.PrefixesOf("abcdef"), (std::vector<uint32_t>{2, 1, 0}));
  EXPECT_EQ(f.PrefixesOf("abcd"), (std::vector<uint32_t>{2, 1, 0}));  // the key itself
  EXPECT_EQ(f.PrefixesOf("abc"), (std::vector<uint32_t>{1, 0}));      // prefixes stored keys
  EXPECT_EQ(f.PrefixesOf("abcdef", 2), std::vector<uint32_t>{2});     // longer than 2 bytes
  EXPECT_TRUE(f.PrefixesOf("c").empty());
  EXPECT_TRUE(f.PrefixesOf("").empty());
}

// Paging by the last key of each page visits every key once, in order.
TEST(KeyIndexTest, PagesAfterTheLastKeyCoverEveryKeyOnce) {
  std::mt19937 rng(11);
  Fixture f;
  for (int i = 0; i < 3000; ++i) {
    std::string k = RandomKey(rng) + RandomKey(rng) + RandomKey(rng);
    if (f.oracle.contains(k)) continue;
    f.oracle[k] = static_cast<uint32_t>(f.keys.size());
    f.keys.push_back(k);
    ASSERT_TRUE(f.index.Insert(f.oracle[k], k, f.KeyOf()));
  }
  for (const std::string prefix : {"", "a", "b\xff"}) {
    std::vector<uint32_t> all = f.Visit(prefix), paged = f.Visit(prefix, 7);
    while (!paged.empty()) {
      std::vector<uint32_t> page = f.VisitAfter(prefix, f.keys[paged.back()], 7);
      if (page.empty()) break;
      paged.insert(paged.end(), page.begin(), page.end());
    }
    EXPECT_EQ(paged, all) << "prefix '" << prefix << "'";
  }
}

// A tree built from sorted keys answers as one built by inserts, and takes
// inserts and erases afterwards.
TEST(KeyIndexTest, BuildFromSortedKeysMatchesInserts) {
  std::mt19937 rng(13);
  for (int round = 0; round < 50; ++round) {
    Fixture built, inserted;
    const int n = round < 3 ? round : static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) {
      std::string k = RandomKey(rng) + RandomKey(rng);
      if (built.oracle.contains(k)) continue;
      built.oracle[k] = static_cast<uint32_t>(built.keys.size());
      built.keys.push_back(k);
      ASSERT_TRUE(inserted.index.Insert(built.oracle[k], k, built.KeyOf()));
    }
    inserted.keys = built.keys;
    inserted.oracle = built.oracle;
    std::vector<uint32_t> sorted;
    for (const auto& [k, slot] : built.oracle) sorted.push_back(slot);
    built.index.Build(sorted, built.KeyOf());
    ASSERT_EQ(built.index.size(), built.oracle.size());
    for (const std::string prefix : {"", "a", "b", "\xff", "a\0", "ab"}) {
      ASSERT_EQ(built.Visit(prefix), built.Expected(prefix)) << "prefix '" << prefix << "'";
      ASSERT_EQ(built.Visit(prefix), inserted.Visit(prefix));
      const std::string after = RandomKey(rng);
      ASSERT_EQ(built.VisitAfter(prefix, after), built.ExpectedAfter(prefix, after));
    }
    for (int step = 0; step < 200; ++step) {
      std::string k = RandomKey(rng) + RandomKey(rng);
      auto it = built.oracle.find(k);
      if (it == built.oracle.end()) {
        const auto slot = static_cast<uint32_t>(built.keys.size());
        built.keys.push_back(k);
        ASSERT_TRUE(built.index.Insert(slot, k, built.KeyOf()));
        built.oracle[k] = slot;
      } else {
        EXPECT_FALSE(built.index.Insert(it->second + 1000, k, built.KeyOf()));
        ASSERT_TRUE(built.index.Erase(it->second, k));
        built.oracle.erase(it);
      }
    }
    ASSERT_EQ(built.Visit(""), built.Expected(""));
    ASSERT_EQ(built.Visit("b"), built.Expected("b"));
  }
}

TEST(KeyIndexTest, EmptyAndSingle) {
  Fixture f;
  EXPECT_TRUE(f.Visit("").empty());
  EXPECT_TRUE(f.VisitAfter("", "").empty());
  EXPECT_FALSE(f.index.Erase(0, "x"));
  f.keys = {"abc"};
  EXPECT_TRUE(f.index.Insert(0, "abc", f.KeyOf()));
  EXPECT_EQ(f.Visit("ab"), std::vector<uint32_t>{0});
  EXPECT_TRUE(f.Visit("abd").empty());
  EXPECT_TRUE(f.Visit("abcd").empty());
  EXPECT_EQ(f.VisitAfter("", "ab"), std::vector<uint32_t>{0});
  EXPECT_TRUE(f.VisitAfter("", "abc").empty());
  EXPECT_TRUE(f.VisitAfter("a", "b").empty());
  EXPECT_FALSE(f.index.Erase(1, "abc"));  // another slot
  EXPECT_TRUE(f.index.Erase(0, "abc"));
  EXPECT_TRUE(f.index.empty());
  EXPECT_TRUE(f.Visit("").empty());
}

}  // namespace
}  // namespace crescent::master
