// KeyIndex: an ordered set of slots whose byte-string keys live elsewhere (in
// the shard's entries), for listing and removing by key prefix.
//
// It is a crit-bit (PATRICIA) tree: an internal node names the first symbol
// position and bit at which the keys below it differ; a leaf is a slot. The
// tree stores no key bytes at all: it reads a key through `key_of(slot)` once
// per Insert (the nearest stored key, to find where the new one differs) and
// once per VisitPrefix (to check the subtree found; VisitPrefixAfter reads one
// more, to place its start). n keys take n - 1 nodes of
// 12 bytes, in one vector with 32-bit links and an intrusive free list.
//
// VisitPrefixesOf answers the other direction, the stored keys that prefix a
// given key (a longest-prefix lookup), reading one key per right turn of that
// key's path.
//
// Keys are compared as symbol strings with a terminator: symbol i of key k is
// k[i] + 1 (as unsigned) for i < |k| and 0 at i == |k|, so a key sorts before
// every longer key it prefixes, as std::string does. A node's bit is the
// highest bit in which the two sides' symbols at its position differ; the
// child with that bit clear holds the smaller keys, so an in-order walk
// (child 0 first) yields keys in lexicographic order.
//
// Invariants:
//  - Along every root-to-leaf path the (position, bit) of the nodes strictly
//    increase (position ascending, then bit descending), and all keys below a
//    node agree on every symbol before its position and on the bits of the
//    symbol at its position above its bit.
//  - Exactly size() leaves and size() - 1 live nodes (none when empty).
//  - The caller keeps a slot's key unchanged while the slot is in the index.
// Not thread-safe; the shard's lock serialises writers (shared lock for reads).
// Keys are at most 65535 bytes; slots are below 2^31.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace crescent::master {

class KeyIndex {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Adds `slot` under `key`; false (nothing changes) when the key is present.
  // key_of(slot) -> std::string_view gives the key of any slot in the index.
  template <typename KeyOf>
  bool Insert(uint32_t slot, std::string_view key, const KeyOf& key_of) {
    assert(slot < kLeaf && key.size() <= 0xffff);
    if (size_ == 0) {
      root_ = kLeaf | slot;
      size_ = 1;
      return true;
    }
    uint32_t ref = root_;
    while (!IsLeaf(ref)) ref = nodes_[ref].child[Dir(nodes_[ref], key)];
    const std::string_view other = key_of(ref & ~kLeaf);
    const size_t pos = FirstDiff(key, other);
    if (pos == key.size() && key.size() == other.size()) return false;
    const uint32_t a = Sym(key, pos);
    const uint32_t mask = std::bit_floor(a ^ Sym(other, pos));
    const uint32_t dir = (a & mask) != 0 ? 1 : 0;
    const uint32_t node = NewNode();  // before taking pointers into nodes_
    uint32_t* where = &root_;
    while (!IsLeaf(*where)) {
      Node& n = nodes_[*where];
      if (Below(n, pos, mask)) break;
      where = &n.child[Dir(n, key)];
    }
    Node& n = nodes_[node];
    n.pos = static_cast<uint16_t>(pos);
    n.mask = static_cast<uint16_t>(mask);
    n.child[dir] = kLeaf | slot;
    n.child[1 - dir] = *where;
    *where = node;
    ++size_;
    return true;
  }

  // Replaces the contents with `slots`, whose keys must be strictly
  // ascending: the tree whose nodes are the critical bits of adjacent keys,
  // built in one pass (a Cartesian tree on those bits, the earliest bit on
  // top) with no search per key. A restore builds each shard's index so.
  template <typename KeyOf>
  void Build(const std::vector<uint32_t>& slots, const KeyOf& key_of) {
    BuildSorted(
        slots.size(), [&](size_t i) { return slots[i]; },
        [&](size_t i) { return key_of(slots[i]); });
  }
  // The same from the i-th slot and its key (a caller that holds the sorted
  // keys already reads no entry for them).
  template <typename SlotAt, typename KeyAt>
  void BuildSorted(size_t count, const SlotAt& slot_at, const KeyAt& key_at) {
    nodes_.clear();
    free_ = kNone;
    size_ = count;
    if (count == 0) return;
    nodes_.resize(count - 1);
    // The right spine of the tree built so far, the deepest node on top.
    std::vector<uint32_t> spine;
    std::string_view prev = key_at(0);
    for (uint32_t i = 0; i + 1 < count; ++i) {
      const std::string_view next = key_at(i + 1);
      const size_t pos = FirstDiff(prev, next);
      assert(pos < next.size() && (pos == prev.size() || prev[pos] != next[pos]));
      Node& n = nodes_[i];
      n.pos = static_cast<uint16_t>(pos);
      n.mask = static_cast<uint16_t>(std::bit_floor(Sym(prev, pos) ^ Sym(next, pos)));
      // Nodes below this bit go under it, on its smaller side.
      uint32_t left = kLeaf | slot_at(i);
      while (!spine.empty() && Below(nodes_[spine.back()], n.pos, n.mask)) {
        left = spine.back();
        spine.pop_back();
      }
      n.child[0] = left;
      n.child[1] = kLeaf | slot_at(i + 1);  // until a later node takes its place
      if (!spine.empty()) nodes_[spine.back()].child[1] = i;
      spine.push_back(i);
      prev = next;
    }
    root_ = count == 1 ? kLeaf | slot_at(0) : spine.front();
  }

  // Removes `slot`, stored under `key`; false when it is not there.
  bool Erase(uint32_t slot, std::string_view key) {
    if (size_ == 0) return false;
    uint32_t* where = &root_;
    uint32_t* parent = nullptr;
    while (!IsLeaf(*where)) {
      parent = where;
      Node& n = nodes_[*where];
      where = &n.child[Dir(n, key)];
    }
    if (*where != (kLeaf | slot)) return false;
    if (parent == nullptr) {
      size_ = 0;
      return true;
    }
    const uint32_t gone = *parent;
    Node& n = nodes_[gone];
    *parent = n.child[where == &n.child[0] ? 1 : 0];
    FreeNode(gone);
    --size_;
    return true;
  }

  // Calls fn(slot) for the keys that start with `prefix`, in key order, until
  // fn returns false.
  template <typename KeyOf, typename Fn>
  void VisitPrefix(std::string_view prefix, const KeyOf& key_of, Fn&& fn) const {
    uint32_t top = 0;
    if (!PrefixTop(prefix, key_of, &top)) return;
    std::vector<uint32_t> stack{top};
    Walk(stack, fn);
  }

  // As VisitPrefix, but only for the keys after `after` in key order (a page's
  // last key: the next page). The walk starts at the first such key, so a page
  // costs its own length plus one root-to-leaf path, wherever it starts.
  template <typename KeyOf, typename Fn>
  void VisitPrefixAfter(std::string_view prefix, std::string_view after, const KeyOf& key_of,
                        Fn&& fn) const {
    uint32_t top = 0;
    if (!PrefixTop(prefix, key_of, &top)) return;
    // Where `after` first differs from the key of the leaf it leads to: that
    // critical bit places it among all the keys below `top` (as in Insert).
    uint32_t leaf = top;
    while (!IsLeaf(leaf)) leaf = nodes_[leaf].child[Dir(nodes_[leaf], after)];
    const std::string_view near = key_of(leaf & ~kLeaf);
    const size_t pos = FirstDiff(after, near);
    const bool stored = pos == after.size() && after.size() == near.size();
    const uint32_t a = stored ? 0 : Sym(after, pos);
    const uint32_t mask = stored ? 0 : std::bit_floor(a ^ Sym(near, pos));
    // Down `after`'s path to where it branches off (or to its own leaf). Each
    // time the path goes left, the right subtree holds only later keys; they
    // are stacked nearest last, so the walk pops them in key order.
    std::vector<uint32_t> stack;
    uint32_t ref = top;
    while (!IsLeaf(ref)) {
      const Node& n = nodes_[ref];
      if (!stored && Below(n, pos, mask)) break;
      const uint32_t dir = Dir(n, after);
      if (dir == 0) stack.push_back(n.child[1]);
      ref = n.child[dir];
    }
    // `after` branches off above `ref`: every key below it is later when
    // after's bit there is clear (the smaller side).
    if (!stored && (a & mask) == 0) stack.push_back(ref);
    Walk(stack, fn);
  }

  // Calls fn(slot) for the stored keys that are prefixes of `key` (`key`
  // itself included) and longer than `min_length`, longest first, until fn
  // returns false. Such a key K = key[0, |K|) searches the tree like `key`
  // above position |K| and takes child 0 from there on (its symbols are 0),
  // so it is the leftmost leaf of a subtree on `key`'s path: of the root, or
  // of a child 1 the path steps into. Those leaves (one per step right) are
  // the only candidates; each is read once.
  template <typename KeyOf, typename Fn>
  void VisitPrefixesOf(std::string_view key, size_t min_length, const KeyOf& key_of,
                       Fn&& fn) const {
    if (size_ == 0) return;
    std::vector<uint32_t> tops{root_};
    uint32_t ref = root_;
    while (!IsLeaf(ref)) {
      const uint32_t dir = Dir(nodes_[ref], key);
      ref = nodes_[ref].child[dir];
      if (dir == 1) tops.push_back(ref);
    }
    std::vector<std::pair<size_t, uint32_t>> found;  // (length, slot)
    for (uint32_t top : tops) {
      while (!IsLeaf(top)) top = nodes_[top].child[0];
      const std::string_view k = key_of(top & ~kLeaf);
      if (k.size() > min_length && key.starts_with(k)) found.emplace_back(k.size(), top & ~kLeaf);
    }
    std::sort(found.begin(), found.end(), std::greater<>());
    for (const auto& f : found) {
      if (!fn(f.second)) return;
    }
  }

  // Heap bytes of the node vector.
  size_t MemoryBytes() const { return nodes_.capacity() * sizeof(Node); }

 private:
  static constexpr uint32_t kLeaf = 0x80000000u;
  static constexpr uint32_t kNone = ~uint32_t{0};

  struct Node {
    uint16_t pos;   // symbol position
    uint16_t mask;  // the one bit of the symbol at pos (9-bit symbols)
    uint32_t child[2];
  };
  static_assert(sizeof(Node) == 12);

  static bool IsLeaf(uint32_t ref) { return (ref & kLeaf) != 0; }
  // Whether node `n`'s bit comes after bit (pos, mask) along a path, so that
  // `n` belongs below a node of that bit.
  static bool Below(const Node& n, size_t pos, uint32_t mask) {
    return n.pos > pos || (n.pos == pos && n.mask < mask);
  }
  // The first symbol position at which `a` and `b` differ (the terminator
  // counts): min(|a|, |b|) when one prefixes the other.
  static size_t FirstDiff(std::string_view a, std::string_view b) {
    const size_t common = std::min(a.size(), b.size());
    size_t pos = 0;
    while (pos < common && a[pos] == b[pos]) ++pos;
    return pos;
  }

  // The root of the subtree holding exactly the keys that start with
  // `prefix`; false when there are none.
  template <typename KeyOf>
  bool PrefixTop(std::string_view prefix, const KeyOf& key_of, uint32_t* out) const {
    if (size_ == 0) return false;
    uint32_t top = root_;
    while (!IsLeaf(top) && nodes_[top].pos < prefix.size()) {
      top = nodes_[top].child[Dir(nodes_[top], prefix)];
    }
    // Every key below `top` agrees on the first prefix.size() symbols; one
    // tells whether they all match the prefix.
    uint32_t any = top;
    while (!IsLeaf(any)) any = nodes_[any].child[0];
    if (!key_of(any & ~kLeaf).starts_with(prefix)) return false;
    *out = top;
    return true;
  }

  // In-order walk of the subtrees on `stack` (the next one on top) until fn
  // returns false.
  template <typename Fn>
  void Walk(std::vector<uint32_t>& stack, Fn&& fn) const {
    while (!stack.empty()) {
      const uint32_t ref = stack.back();
      stack.pop_back();
      if (IsLeaf(ref)) {
        if (!fn(ref & ~kLeaf)) return;
      } else {
        stack.push_back(nodes_[ref].child[1]);
        stack.push_back(nodes_[ref].child[0]);
      }
    }
  }
  static uint32_t Sym(std::string_view key, size_t i) {
    return i < key.size() ? static_cast<uint32_t>(static_cast<unsigned char>(key[i])) + 1 : 0;
  }
  static uint32_t Dir(const Node& n, std::string_view key) {
    return (Sym(key, n.pos) & n.mask) != 0 ? 1 : 0;
  }

  uint32_t NewNode() {
    if (free_ != kNone) {
      const uint32_t node = free_;
      free_ = nodes_[node].child[0];
      return node;
    }
    nodes_.push_back(Node{});
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  void FreeNode(uint32_t node) {
    nodes_[node].child[0] = free_;
    free_ = node;
  }

  std::vector<Node> nodes_;
  uint32_t root_ = 0;
  uint32_t free_ = kNone;  // free nodes, linked through child[0]
  size_t size_ = 0;
};

}  // namespace crescent::master
