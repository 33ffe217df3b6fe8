// RadixTree: a path-compressed trie from keys (sequences of symbols) to values.
// The master uses it over byte strings (StringRadixTree: list/remove by a key
// prefix, "longest stored key that is a prefix of K") and over chains of page
// ids (PageChainRadixTree: a key is the sequence of page hashes of a prefix).
//
// Invariants (CheckInvariants() verifies all of them):
//  - Path compression. The root's label is empty; every other node's label (the
//    edge from its parent) holds >= 1 symbol, and a node's key is the
//    concatenation of the labels from the root down to it. A node other than
//    the root holds a value or has >= 2 children, so there are at most
//    2 * Size() nodes besides the root. Erase() keeps it so: it unlinks a leaf
//    whose value goes, and merges a valueless node left with one child into
//    that child. The shape is thus a function of the key set alone, and so is
//    MemoryBytes().
//  - Ordering. A node's children have distinct first symbols and are kept
//    sorted by them, so a pre-order walk yields keys in lexicographic order.
//    Symbols are unsigned integers; bytes compare as unsigned, as std::string does.
//  - Ownership. Every node owns its children through unique_ptr. A node and its
//    label share one heap allocation; the children of a node share another
//    (owning pointers, then the first symbol of each child, for the search).
//    Nothing else points at a node. A label is copied before the node that holds
//    it is freed (splits and merges build the new node first, then swap it in).
//  - The empty key is allowed; it is stored at the root.
//  - Value pointers handed out (Find, LongestPrefixOf) stay valid only until
//    the next Insert, InsertOrAssign, Erase, ErasePrefix or Clear: splits and
//    merges move values into new nodes.
//  - On bad_alloc an operation changes nothing: every allocation comes before
//    the first change. Not thread-safe; the owner serialises all calls.
//
// Keys are at most 2^31 - 1 symbols long. Value must be default-constructible
// and nothrow-movable; use NoValue for a set (it costs no space in a node).
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace crescent::cache {

// The Value of a set: RadixTree<Symbol, NoValue>.
struct NoValue {};

template <std::unsigned_integral Symbol, typename Value>
class RadixTree {
  static_assert(std::is_nothrow_move_constructible_v<Value> &&
                    std::is_nothrow_move_assignable_v<Value> &&
                    std::is_nothrow_default_constructible_v<Value>,
                "a split or merge moves values after its allocations succeeded");

 public:
  // A byte tree takes and reports keys as std::string_view; any other tree as a
  // span of symbols (a std::vector<uint64_t> converts implicitly).
  static constexpr bool kByteKeys = std::is_same_v<Symbol, unsigned char>;
  using KeyView = std::conditional_t<kByteKeys, std::string_view, std::span<const Symbol>>;
  static constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

  // A stored key that is a prefix of a query: its length in symbols, its value.
  struct Match {
    size_t length;
    const Value* value;
  };

  RadixTree() = default;
  RadixTree(const RadixTree&) = delete;
  RadixTree& operator=(const RadixTree&) = delete;
  // A moved-from tree is empty and usable.
  RadixTree(RadixTree&& other) noexcept { Swap(other); }
  RadixTree& operator=(RadixTree&& other) noexcept {
    if (this != &other) {
      Clear();
      Swap(other);
    }
    return *this;
  }
  ~RadixTree() = default;

  // Stores `value` under `key` unless the key is present, in which case the
  // stored value is kept (as std::map::insert does). Returns whether it was new.
  bool Insert(KeyView key, Value value = Value{}) {
    auto [node, is_new] = Emplace(ToSpan(key));
    if (is_new) Store(*node, std::move(value));
    return is_new;
  }

  // Stores `value` under `key`, replacing any stored value. Returns whether the
  // key was new.
  bool InsertOrAssign(KeyView key, Value value) {
    auto [node, is_new] = Emplace(ToSpan(key));
    if (is_new) {
      Store(*node, std::move(value));
    } else {
      node->value = std::move(value);
    }
    return is_new;
  }

  // Removes `key`. Returns whether it was present.
  bool Erase(KeyView key) {
    Path path = Walk(ToSpan(key), /*partial_last_edge=*/false);
    Node* node = path.node;
    if (node == nullptr || !node->has_value) return false;
    if (path.node_slot == nullptr || node->num_kids >= 2) {  // the root, or a fork
      node->has_value = 0;
      node->value = Value{};
    } else if (node->num_kids == 1) {
      MergeWithKid(*path.node_slot, 0, 0);
    } else {
      UnlinkKid(*path.parent, path.parent_slot, path.node_idx);
    }
    --size_;
    return true;
  }

  // Removes every key that starts with `prefix`. Returns how many there were.
  size_t ErasePrefix(KeyView prefix) {
    Path path = Walk(ToSpan(prefix), /*partial_last_edge=*/true);
    if (path.node == nullptr) return 0;
    if (path.node_slot == nullptr) {  // the empty prefix: everything
      size_t n = size_;
      Clear();
      return n;
    }
    size_t n = CountValues(*path.node);
    UnlinkKid(*path.parent, path.parent_slot, path.node_idx);
    size_ -= n;
    return n;
  }

  // The value stored under `key`, or null.
  Value* Find(KeyView key) {
    Node* node = Walk(ToSpan(key), /*partial_last_edge=*/false).node;
    return node != nullptr && node->has_value ? &node->value : nullptr;
  }
  const Value* Find(KeyView key) const { return const_cast<RadixTree*>(this)->Find(key); }
  bool Contains(KeyView key) const { return Find(key) != nullptr; }

  // The longest stored key that is a prefix of `key` (possibly `key` itself or
  // the empty key), or nullopt when no stored key is a prefix of it.
  std::optional<Match> LongestPrefixOf(KeyView key) const {
    std::span<const Symbol> k = ToSpan(key);
    std::optional<Match> best;
    if (root_.has_value) best = Match{0, &root_.value};
    const Node* node = &root_;
    size_t pos = 0;
    while (pos < k.size()) {
      node = node->FindKid(k[pos]);
      if (node == nullptr || !IsPrefix(node->Label(), k.subspan(pos))) break;
      pos += node->label_len;
      if (node->has_value) best = Match{pos, &node->value};
    }
    return best;
  }

  // Calls fn(key, value) for the keys that start with `prefix`, in order, until
  // fn returns false or `limit` keys were visited. `key` is a KeyView valid
  // during the call only. Returns how many keys were visited.
  template <typename Fn>
  size_t VisitPrefix(KeyView prefix, Fn&& fn, size_t limit = kNoLimit) const {
    static_assert(std::is_invocable_r_v<bool, Fn&, KeyView, const Value&>,
                  "fn(KeyView key, const Value& value) must return bool");
    std::span<const Symbol> p = ToSpan(prefix);
    Path path = const_cast<RadixTree*>(this)->Walk(p, /*partial_last_edge=*/true);
    if (path.node == nullptr || limit == 0) return 0;
    std::vector<Symbol> key(p.begin(), p.begin() + path.depth);
    std::vector<std::pair<const Node*, uint32_t>> stack;  // node, next child to enter
    size_t visited = 0;
    // Appends n's label to `key`, reports n's value; false when the walk must stop.
    auto enter = [&](const Node* n) {
      std::span<const Symbol> label = n->Label();
      key.insert(key.end(), label.begin(), label.end());
      stack.emplace_back(n, 0);
      if (!n->has_value) return true;
      ++visited;
      return static_cast<bool>(fn(ToKeyView(key), n->value)) && visited < limit;
    };
    if (!enter(path.node)) return visited;
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next == n->num_kids) {
        key.resize(key.size() - n->label_len);
        stack.pop_back();
        continue;
      }
      const Node* kid = n->Kid(next++).get();  // before enter(), which may move `stack`
      if (!enter(kid)) break;
    }
    return visited;
  }

  // How many keys start with `prefix`. O(length of prefix + nodes below it).
  size_t CountPrefix(KeyView prefix) const {
    Path path = const_cast<RadixTree*>(this)->Walk(ToSpan(prefix), /*partial_last_edge=*/true);
    return path.node == nullptr ? 0 : CountValues(*path.node);
  }

  size_t Size() const { return size_; }
  bool Empty() const { return size_ == 0; }

  void Clear() {
    root_.DropKids();
    root_.has_value = 0;
    root_.value = Value{};
    size_ = 0;
    bytes_ = sizeof(RadixTree);
  }

  // Heap and object bytes held, modelling a malloc with an 8-byte chunk header,
  // 16-byte granularity and 32-byte minimum chunks (glibc); O(1).
  size_t MemoryBytes() const { return bytes_; }

  // Empty when every invariant in the header comment holds, else the first
  // broken one. O(Size()); for tests.
  std::string CheckInvariants() const;

 private:
  struct Node;
  struct NodeDeleter {
    void operator()(Node* node) const noexcept { DestroySubtree(node); }
  };
  using NodePtr = std::unique_ptr<Node, NodeDeleter>;
  static constexpr size_t kKidBytes = sizeof(NodePtr) + sizeof(Symbol);

  // How many children a block holds: derived from the count, so a node stores
  // no capacity. Growth by ~1.5x, tight up to 4 (most nodes have 2 or 3).
  static uint32_t Capacity(uint32_t n) {
    if (n <= 4) return n;
    uint32_t pow2 = std::bit_ceil(n);
    return n <= pow2 / 4 * 3 ? pow2 / 4 * 3 : pow2;
  }

  // A node, followed in the same allocation by its label_len label symbols.
  struct Node {
    void* kids = nullptr;  // Capacity(num_kids) NodePtrs, then as many Symbols
    uint32_t num_kids = 0;
    uint32_t label_len : 31 = 0;
    uint32_t has_value : 1 = 0;
    [[no_unique_address]] Value value{};

    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node() { FreeBlock(kids, num_kids); }

    const Symbol* label_data() const { return reinterpret_cast<const Symbol*>(this + 1); }
    Symbol* label_data() { return reinterpret_cast<Symbol*>(this + 1); }
    std::span<const Symbol> Label() const { return {label_data(), label_len}; }

    NodePtr* slots() const { return static_cast<NodePtr*>(kids); }
    Symbol* firsts() const { return reinterpret_cast<Symbol*>(slots() + Capacity(num_kids)); }
    const NodePtr& Kid(uint32_t i) const { return slots()[i]; }
    NodePtr& Kid(uint32_t i) { return slots()[i]; }

    // Index of the child whose label starts with `s`, or where it would go.
    uint32_t LowerBound(Symbol s) const {
      const Symbol* f = firsts();
      return static_cast<uint32_t>(std::lower_bound(f, f + num_kids, s) - f);
    }
    Node* FindKid(Symbol s) const {
      uint32_t i = LowerBound(s);
      return i < num_kids && firsts()[i] == s ? Kid(i).get() : nullptr;
    }

    // Inserts `kid` as child `at` (= LowerBound of its first symbol).
    void InsertKid(uint32_t at, NodePtr kid) {
      void* block = BlockFor(num_kids + 1);  // may throw; nothing has changed yet
      Shift(block, num_kids + 1, at, at + 1);
      Kid(at) = std::move(kid);
      firsts()[at] = Kid(at)->label_data()[0];
    }
    // Unlinks child `at` and returns it.
    NodePtr EraseKid(uint32_t at) {
      void* block = BlockFor(num_kids - 1);  // may throw; nothing has changed yet
      NodePtr kid = std::move(Kid(at));
      Shift(block, num_kids - 1, at + 1, at);
      return kid;
    }
    void DropKids() { FreeBlock(std::exchange(kids, nullptr), std::exchange(num_kids, 0)); }

   private:
    // A new block when n children need another capacity than num_kids, else null.
    void* BlockFor(uint32_t n) const {
      return Capacity(n) == Capacity(num_kids) ? nullptr : AllocBlock(n);
    }
    // Sets the count to n, moving children [from, num_kids) to start at `to`,
    // into `block` when it is not null (one slot opens or closes). Never throws.
    void Shift(void* block, uint32_t n, uint32_t from, uint32_t to);
  };

  // The last two edges of a walk from the root: `node` hangs from `parent` at
  // index `node_idx` of its children, in `node_slot`; the slots are null when
  // the node (or parent) is the root. `depth` counts the key's symbols above
  // node's label.
  struct Path {
    Node* node = nullptr;
    NodePtr* node_slot = nullptr;
    uint32_t node_idx = 0;
    Node* parent = nullptr;
    NodePtr* parent_slot = nullptr;
    size_t depth = 0;
  };

  static std::span<const Symbol> ToSpan(KeyView key) {
    if constexpr (kByteKeys) {
      return {reinterpret_cast<const unsigned char*>(key.data()), key.size()};
    } else {
      return key;
    }
  }
  static KeyView ToKeyView(const std::vector<Symbol>& key) {
    if constexpr (kByteKeys) {
      return {reinterpret_cast<const char*>(key.data()), key.size()};
    } else {
      return {key.data(), key.size()};
    }
  }
  static bool IsPrefix(std::span<const Symbol> p, std::span<const Symbol> s) {
    return p.size() <= s.size() && std::equal(p.begin(), p.end(), s.begin());
  }

  static size_t AllocBytes(size_t n) { return std::max<size_t>(32, (n + 8 + 15) / 16 * 16); }
  static size_t NodeBytes(size_t label_len) {
    return AllocBytes(sizeof(Node) + label_len * sizeof(Symbol));
  }
  static size_t BlockBytes(uint32_t num_kids) {
    return num_kids == 0 ? 0 : AllocBytes(Capacity(num_kids) * kKidBytes);
  }

  // Allocates a node labelled a followed by b. Reads a and b before anything
  // else changes, so they may point into nodes about to be replaced.
  static NodePtr NewNode(std::span<const Symbol> a, std::span<const Symbol> b = {}) {
    static_assert(alignof(Node) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    static_assert(alignof(Symbol) <= alignof(Node));
    size_t len = a.size() + b.size();
    assert(len < (size_t{1} << 31));
    NodePtr node(new (::operator new(sizeof(Node) + len * sizeof(Symbol))) Node());
    node->label_len = static_cast<uint32_t>(len);
    std::copy(b.begin(), b.end(), std::copy(a.begin(), a.end(), node->label_data()));
    return node;
  }
  static void* AllocBlock(uint32_t n) {
    uint32_t cap = Capacity(n);
    if (cap == 0) return nullptr;
    void* block = ::operator new(kKidBytes* cap);
    std::uninitialized_value_construct_n(static_cast<NodePtr*>(block), cap);
    return block;
  }
  static void FreeBlock(void* block, uint32_t n) {
    if (block == nullptr) return;
    std::destroy_n(static_cast<NodePtr*>(block), Capacity(n));
    ::operator delete(block);
  }
  // Frees a subtree without recursion, since a chain of pages can be thousands
  // of nodes deep. Childless children are freed at once, so freeing a node
  // whose children are leaves (every split and erase) allocates nothing; a
  // bad_alloc of `pending` for a deeper subtree ends the process.
  static void DestroySubtree(Node* top) noexcept {
    std::vector<Node*> pending;
    for (Node* node = top; node != nullptr;) {
      for (uint32_t i = 0; i < node->num_kids; ++i) {
        Node* kid = node->Kid(i).release();
        if (kid->num_kids == 0) {
          FreeNode(kid);
        } else {
          pending.push_back(kid);
        }
      }
      FreeNode(node);
      node = nullptr;
      if (!pending.empty()) {
        node = pending.back();
        pending.pop_back();
      }
    }
  }
  static void FreeNode(Node* node) noexcept {
    node->~Node();  // its slots are all empty by now
    ::operator delete(node);
  }
  // Calls fn(node) for `top` and every node below it, in no particular order.
  template <typename Fn>
  static void ForEachNode(const Node& top, Fn&& fn) {
    fn(top);
    if (top.num_kids == 0) return;  // a leaf: no stack to allocate
    std::vector<const Node*> pending{&top};
    while (!pending.empty()) {
      const Node* node = pending.back();
      pending.pop_back();
      for (uint32_t i = 0; i < node->num_kids; ++i) {
        const Node* kid = node->Kid(i).get();
        fn(*kid);
        if (kid->num_kids != 0) pending.push_back(kid);
      }
    }
  }
  static size_t CountValues(const Node& top) {
    size_t n = 0;
    ForEachNode(top, [&n](const Node& node) { n += node.has_value; });
    return n;
  }
  static size_t SubtreeBytes(const Node& top) {
    size_t bytes = 0;
    ForEachNode(top, [&bytes](const Node& node) {
      bytes += NodeBytes(node.label_len) + BlockBytes(node.num_kids);
    });
    return bytes;
  }

  void Store(Node& node, Value value) {
    node.value = std::move(value);
    node.has_value = 1;
    ++size_;
  }

  // Moves `from`'s children and value into the empty node `to`.
  static void MoveContents(Node& from, Node& to) {
    to.kids = std::exchange(from.kids, nullptr);
    to.num_kids = std::exchange(from.num_kids, 0);
    to.has_value = from.has_value;
    from.has_value = 0;
    to.value = std::move(from.value);
  }

  void Swap(RadixTree& other) noexcept {
    std::swap(root_.kids, other.root_.kids);
    std::swap(root_.num_kids, other.root_.num_kids);
    uint32_t has_value = root_.has_value;
    root_.has_value = other.root_.has_value;
    other.root_.has_value = has_value;
    std::swap(root_.value, other.root_.value);
    std::swap(size_, other.size_);
    std::swap(bytes_, other.bytes_);
  }

  Path Walk(std::span<const Symbol> key, bool partial_last_edge);
  std::pair<Node*, bool> Emplace(std::span<const Symbol> key);
  Node* Split(NodePtr& slot, size_t keep, std::span<const Symbol> rest);
  void MergeWithKid(NodePtr& slot, uint32_t keep, size_t dropped_bytes);
  void UnlinkKid(Node& parent, NodePtr* parent_slot, uint32_t at);

  Node root_;
  size_t size_ = 0;
  size_t bytes_ = sizeof(RadixTree);
};

// Byte-string keys ("model-a/<hash>"), compared as unsigned bytes.
template <typename Value>
using StringRadixTree = RadixTree<unsigned char, Value>;
using StringRadixSet = RadixTree<unsigned char, NoValue>;
// Chains of 64-bit page ids: key i of a request is its first i page hashes.
template <typename Value>
using PageChainRadixTree = RadixTree<uint64_t, Value>;

// ---------------------------------------------------------------------------
// Implementation.

template <std::unsigned_integral Symbol, typename Value>
void RadixTree<Symbol, Value>::Node::Shift(void* block, uint32_t n, uint32_t from, uint32_t to) {
  uint32_t old_n = num_kids;
  NodePtr* src = slots();
  Symbol* src_firsts = firsts();
  if (block == nullptr && Capacity(n) == Capacity(old_n)) {  // in place
    if (from > to) {
      std::move(src + from, src + old_n, src + to);
      std::copy(src_firsts + from, src_firsts + old_n, src_firsts + to);
    } else {
      std::move_backward(src + from, src + old_n, src + old_n + (to - from));
      std::copy_backward(src_firsts + from, src_firsts + old_n, src_firsts + old_n + (to - from));
    }
    num_kids = n;
    return;
  }
  if (block != nullptr) {  // n == 0 leaves no block
    NodePtr* dst = static_cast<NodePtr*>(block);
    Symbol* dst_firsts = reinterpret_cast<Symbol*>(dst + Capacity(n));
    uint32_t gap = std::min(from, to);
    std::move(src, src + gap, dst);
    std::copy(src_firsts, src_firsts + gap, dst_firsts);
    std::move(src + from, src + old_n, dst + to);
    std::copy(src_firsts + from, src_firsts + old_n, dst_firsts + to);
  }
  FreeBlock(kids, old_n);
  kids = block;
  num_kids = n;
}

template <std::unsigned_integral Symbol, typename Value>
typename RadixTree<Symbol, Value>::Path RadixTree<Symbol, Value>::Walk(std::span<const Symbol> key,
                                                                       bool partial_last_edge) {
  Path path;
  path.node = &root_;
  size_t pos = 0;
  while (pos < key.size()) {
    Node* node = path.node;
    uint32_t i = node->LowerBound(key[pos]);
    if (i == node->num_kids || node->firsts()[i] != key[pos]) return Path{};
    NodePtr& slot = node->Kid(i);
    std::span<const Symbol> rest = key.subspan(pos);
    std::span<const Symbol> label = slot->Label();
    bool ok = partial_last_edge && rest.size() < label.size() ? IsPrefix(rest, label)
                                                              : IsPrefix(label, rest);
    if (!ok) return Path{};
    path = Path{slot.get(), &slot, i, node, path.node_slot, pos};
    pos += label.size();
  }
  return path;
}

template <std::unsigned_integral Symbol, typename Value>
std::pair<typename RadixTree<Symbol, Value>::Node*, bool> RadixTree<Symbol, Value>::Emplace(
    std::span<const Symbol> key) {
  Node* node = &root_;
  size_t pos = 0;
  while (pos < key.size()) {
    uint32_t i = node->LowerBound(key[pos]);
    if (i == node->num_kids || node->firsts()[i] != key[pos]) {
      NodePtr leaf = NewNode(key.subspan(pos));
      Node* raw = leaf.get();
      size_t before = BlockBytes(node->num_kids);
      node->InsertKid(i, std::move(leaf));
      bytes_ = bytes_ + NodeBytes(raw->label_len) + BlockBytes(node->num_kids) - before;
      return {raw, true};
    }
    NodePtr& slot = node->Kid(i);
    std::span<const Symbol> label = slot->Label();
    std::span<const Symbol> rest = key.subspan(pos);
    size_t common = static_cast<size_t>(
        std::mismatch(label.begin(), label.end(), rest.begin(), rest.end()).first - label.begin());
    if (common < label.size()) return {Split(slot, common, rest.subspan(common)), true};
    node = slot.get();
    pos += common;
  }
  return {node, !node->has_value};
}

// The node in `slot` has a label longer than `keep` (>= 1). Replaces it by a
// node labelled with the first `keep` symbols, whose children are the old node
// relabelled with the rest and, unless `rest` is empty, a new leaf for `rest`.
// Returns the node that is to hold the new key (the leaf, or the new parent).
template <std::unsigned_integral Symbol, typename Value>
typename RadixTree<Symbol, Value>::Node* RadixTree<Symbol, Value>::Split(
    NodePtr& slot, size_t keep, std::span<const Symbol> rest) {
  Node& old = *slot;
  std::span<const Symbol> label = old.Label();  // dies with `old`, at the swap below
  NodePtr top = NewNode(label.first(keep));
  NodePtr tail = NewNode(label.subspan(keep));
  Node* tail_raw = tail.get();
  Node* target = top.get();
  size_t added = NodeBytes(keep) + NodeBytes(label.size() - keep);
  top->InsertKid(0, std::move(tail));
  if (!rest.empty()) {
    NodePtr leaf = NewNode(rest);
    target = leaf.get();
    added += NodeBytes(rest.size());
    top->InsertKid(top->LowerBound(rest[0]), std::move(leaf));
  }
  added += BlockBytes(top->num_kids);
  size_t freed = NodeBytes(label.size());
  // Every allocation succeeded; nothing below throws.
  MoveContents(old, *tail_raw);
  slot = std::move(top);  // frees `old`
  bytes_ = bytes_ + added - freed;
  return target;
}

// The node in `slot` (not the root) no longer needs to exist: it has no value
// and `keep` is the only child that stays; any other child is a subtree of
// `dropped_bytes` being removed. Replaces the node by one labelled with its
// label followed by kid `keep`'s, holding that kid's children and value.
template <std::unsigned_integral Symbol, typename Value>
void RadixTree<Symbol, Value>::MergeWithKid(NodePtr& slot, uint32_t keep, size_t dropped_bytes) {
  Node& node = *slot;
  Node& kid = *node.Kid(keep);
  NodePtr merged = NewNode(node.Label(), kid.Label());
  size_t freed = NodeBytes(node.label_len) + BlockBytes(node.num_kids) + NodeBytes(kid.label_len) +
                 dropped_bytes;
  size_t added = NodeBytes(merged->label_len);
  MoveContents(kid, *merged);
  slot = std::move(merged);  // frees `node`, the emptied `kid` and any dropped child
  bytes_ = bytes_ + added - freed;
}

// Removes child `at` of `parent` with everything below it, then restores path
// compression: a valueless non-root parent left with one child merges with it.
template <std::unsigned_integral Symbol, typename Value>
void RadixTree<Symbol, Value>::UnlinkKid(Node& parent, NodePtr* parent_slot, uint32_t at) {
  size_t dropped = SubtreeBytes(*parent.Kid(at));
  if (parent_slot != nullptr && !parent.has_value && parent.num_kids == 2) {
    MergeWithKid(*parent_slot, 1 - at, dropped);
    return;
  }
  size_t before = BlockBytes(parent.num_kids);
  NodePtr gone = parent.EraseKid(at);
  bytes_ = bytes_ - dropped - before + BlockBytes(parent.num_kids);
}

template <std::unsigned_integral Symbol, typename Value>
std::string RadixTree<Symbol, Value>::CheckInvariants() const {
  if (root_.label_len != 0) return "root has a label";
  size_t values = 0;
  size_t bytes = sizeof(RadixTree) + BlockBytes(root_.num_kids);
  std::string error;
  auto check = [&](const Node& node) {
    values += node.has_value;
    for (uint32_t i = 0; i < node.num_kids && error.empty(); ++i) {
      const Node& kid = *node.Kid(i);
      bytes += NodeBytes(kid.label_len) + BlockBytes(kid.num_kids);
      if (kid.label_len == 0) {
        error = "empty label below the root";
      } else if (!kid.has_value && kid.num_kids < 2) {
        error = "valueless node with < 2 children";
      } else if (node.firsts()[i] != kid.label_data()[0]) {
        error = "first symbol mismatch";
      } else if (i > 0 && node.firsts()[i - 1] >= node.firsts()[i]) {
        error = "children not sorted";
      }
    }
  };
  ForEachNode(root_, check);
  if (!error.empty()) return error;
  if (values != size_) {
    return "Size() is " + std::to_string(size_) + ", found " + std::to_string(values);
  }
  if (bytes != bytes_) {
    return "MemoryBytes() is " + std::to_string(bytes_) + ", found " + std::to_string(bytes);
  }
  return "";
}

}  // namespace crescent::cache
