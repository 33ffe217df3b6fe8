// NodeArray<T>: a SlotTable's node storage (and the learned policy's leaf
// array), an array that grows without copying once it is big.
//
// Up to kSmallBytes it is a malloc'd buffer that doubles by copying, as a
// vector does (a copy of at most 1 MiB). Past that it moves, once, into an
// anonymous mapping of kReserveBytes of address space (MAP_NORESERVE: the
// kernel backs a page when it is first written, so the reservation costs no
// memory), and grows inside it without moving or copying anything: element i
// stays one load from data(). Only an array that outgrows the reservation
// (hundreds of millions of nodes) is moved again, by mremap, which moves page
// tables rather than copying nodes. Where the reservation is refused (strict
// overcommit), the mapping is just twice what is needed and mremap grows it.
//
// T must be trivially copyable and destructible: nodes are moved as bytes and
// never destroyed. Elements past size() are raw memory.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

namespace crescent::cache {

template <typename T>
class NodeArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  NodeArray() = default;
  ~NodeArray() {
    if (mapped_bytes_ > 0) {
      munmap(data_, mapped_bytes_);
    } else {
      std::free(data_);
    }
  }
  NodeArray(const NodeArray&) = delete;
  NodeArray& operator=(const NodeArray&) = delete;
  NodeArray(NodeArray&& o) noexcept
      : data_(o.data_), size_(o.size_), capacity_(o.capacity_), mapped_bytes_(o.mapped_bytes_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = o.mapped_bytes_ = 0;
  }
  NodeArray& operator=(NodeArray&& o) noexcept {
    if (this != &o) {
      NodeArray gone(std::move(*this));
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      mapped_bytes_ = o.mapped_bytes_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = o.mapped_bytes_ = 0;
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }

  // Appends a value-initialised element.
  void emplace_back() {
    if (size_ == capacity_) [[unlikely]] {
      Grow(size_ + 1);
    }
    new (data_ + size_) T{};
    ++size_;
  }
  void push_back(const T& value) {
    emplace_back();
    data_[size_ - 1] = value;
  }
  void pop_back() { --size_; }
  void reserve(size_t count) {
    if (count > capacity_) Grow(count);
  }
  // `count` elements: the first min(count, size()) kept, the rest value-initialised.
  void resize(size_t count) {
    reserve(count);
    for (size_t i = size_; i < count; ++i) new (data_ + i) T{};
    size_ = count;
  }
  // `count` copies of `value`, replacing what was held.
  void assign(size_t count, const T& value) {
    reserve(count);
    for (size_t i = 0; i < count; ++i) new (data_ + i) T(value);
    size_ = count;
  }

 private:
  static constexpr size_t kSmallBytes = size_t{1} << 20;
  static constexpr size_t kReserveBytes = size_t{8} << 30;
  static constexpr size_t kPage = 4096;

  void Grow(size_t count) {
    const size_t want = std::max({count, 2 * capacity_, size_t{16}});
    if (want * sizeof(T) <= kSmallBytes) {
      auto* grown = static_cast<T*>(std::malloc(want * sizeof(T)));
      if (grown == nullptr) throw std::bad_alloc();
      if (size_ > 0) std::memcpy(grown, data_, size_ * sizeof(T));
      std::free(data_);
      data_ = grown;
      capacity_ = want;
      return;
    }
    const size_t bytes = (want * sizeof(T) + kPage - 1) / kPage * kPage;
    void* grown;
    if (mapped_bytes_ == 0) {
      grown = Map(std::max(bytes, kReserveBytes));
      size_t got = std::max(bytes, kReserveBytes);
      if (grown == MAP_FAILED) {
        got = bytes;
        grown = Map(got);
      }
      if (grown == MAP_FAILED) throw std::bad_alloc();
      if (size_ > 0) std::memcpy(grown, data_, size_ * sizeof(T));
      std::free(data_);
      mapped_bytes_ = got;
      data_ = static_cast<T*>(grown);
      capacity_ = got / sizeof(T);
      return;
    }
    const size_t new_bytes = std::max(bytes, 2 * mapped_bytes_);
    grown = mremap(data_, mapped_bytes_, new_bytes, MREMAP_MAYMOVE);
    if (grown == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(grown);
    mapped_bytes_ = new_bytes;
    capacity_ = new_bytes / sizeof(T);
  }

  static void* Map(size_t bytes) {
    return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1, 0);
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;      // elements
  size_t mapped_bytes_ = 0;  // the mapping's length; 0 while data_ is malloc'd
};

}  // namespace crescent::cache
