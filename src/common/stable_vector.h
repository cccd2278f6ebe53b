// A vector that grows without moving what it holds: elements live in chunks of a fixed size
// (a power of two), so that appending never reallocates them, references stay valid, and an
// index costs a shift and a mask. What a daemon's jobs are kept in: a std::vector of 65,536
// jobs doubling moved every one of them (and had the kernel zero the new memory) while the
// daemon's lock was held, a stall of ~100 ms that every submission then waited on.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace tessera {

template <typename T, size_t kChunkBits = 12>
class StableVector {
 public:
  static constexpr size_t kChunk = size_t{1} << kChunkBits;

  StableVector() = default;
  StableVector(StableVector&& o) noexcept
      : chunks_(std::move(o.chunks_)), size_(std::exchange(o.size_, 0)) {}
  StableVector& operator=(StableVector&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  StableVector(const StableVector&) = delete;
  StableVector& operator=(const StableVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  // Room for `n` elements in all: the chunks are allocated now (their elements are built as
  // they are appended).
  void reserve(size_t n) {
    const size_t chunks = (n + kChunk - 1) / kChunk;
    chunks_.reserve(chunks);
    while (chunks_.size() < chunks)
      AddChunk();
  }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if ((size_ >> kChunkBits) == chunks_.size()) AddChunk();
    T* at = &chunks_[size_ >> kChunkBits][size_ & (kChunk - 1)];
    std::construct_at(at, std::forward<Args>(args)...);
    ++size_;
    return *at;
  }
  void push_back(T value) { emplace_back(std::move(value)); }

  ~StableVector() { clear(); }
  void clear() {
    for (size_t i = size_; i-- > 0;)
      std::destroy_at(&(*this)[i]);
    size_ = 0;
  }

  template <typename Self, typename V>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;
    Iterator() = default;
    Iterator(Self* v, size_t i) : v_(v), i_(i) {}
    reference operator*() const { return (*v_)[i_]; }
    pointer operator->() const { return &(*v_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++i_;
      return before;
    }
    difference_type operator-(const Iterator& o) const {
      return static_cast<difference_type>(i_) - static_cast<difference_type>(o.i_);
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    Self* v_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iterator<StableVector, T>;
  using const_iterator = Iterator<const StableVector, const T>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  // Raw storage: an element exists from its emplace_back on.
  struct Free {
    void operator()(T* p) const { std::allocator<T>().deallocate(p, kChunk); }
  };
  void AddChunk() { chunks_.emplace_back(std::allocator<T>().allocate(kChunk)); }

  std::vector<std::unique_ptr<T[], Free>> chunks_;
  size_t size_ = 0;
};

}  // namespace tessera
