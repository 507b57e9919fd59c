// Append-only array stored in fixed-size chunks: growing never copies what is
// already stored (no latency spike on the recording path) and wastes at most
// one chunk, unlike std::vector's doubling.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace tremor {

template <typename T, std::size_t kChunk = (1u << 16)>
class ChunkedArray {
 public:
  static constexpr std::size_t kChunkSize = kChunk;  // elements [k kChunk, (k + 1) kChunk) are contiguous

  ChunkedArray() noexcept = default;
  // A moved-from array is empty (it must not keep pointers into the chunks it gave away).
  ChunkedArray(ChunkedArray&& other) noexcept
      : chunks_(std::move(other.chunks_)),
        size_(std::exchange(other.size_, 0)),
        next_(std::exchange(other.next_, nullptr)),
        chunk_end_(std::exchange(other.chunk_end_, nullptr)) {
    other.chunks_.clear();
  }
  ChunkedArray& operator=(ChunkedArray&& other) noexcept {
    if (this != &other) {
      chunks_ = std::move(other.chunks_);
      other.chunks_.clear();
      size_ = std::exchange(other.size_, 0);
      next_ = std::exchange(other.next_, nullptr);
      chunk_end_ = std::exchange(other.chunk_end_, nullptr);
    }
    return *this;
  }

  // Makes room for one more element; false if memory ran out.
  bool reserve_next() noexcept { return next_ != chunk_end_ || add_chunk(); }
  // Precondition: reserve_next() returned true since the last push.
  void push_reserved(const T& value) noexcept {
    *next_++ = value;
    ++size_;
  }

  // Elements that fit in the current chunk without allocating, and taking
  // n <= room() of them at once (the caller writes them).
  std::size_t room() const noexcept { return static_cast<std::size_t>(chunk_end_ - next_); }
  T* claim(std::size_t n) noexcept {
    T* const first = next_;
    next_ += n;
    size_ += n;
    return first;
  }

  T& operator[](std::size_t i) noexcept { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](std::size_t i) const noexcept { return chunks_[i / kChunk][i % kChunk]; }
  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept {
    return chunks_.capacity() * sizeof(chunks_[0]) + chunks_.size() * kChunk * sizeof(T);
  }

 private:
  // Out of line: the common case above stays a compare.
  __attribute__((noinline)) bool add_chunk() noexcept {
    try {
      chunks_.reserve(chunks_.size() + 1);
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(kChunk));
      next_ = chunks_.back().get();
      chunk_end_ = next_ + kChunk;
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
  // Where the next element goes and the end of its chunk: a push touches no chunk table.
  T* next_ = nullptr;
  T* chunk_end_ = nullptr;
};

}  // namespace tremor
