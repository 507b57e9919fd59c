// Append-only array stored in fixed-size chunks: growing never copies what is
// already stored (no latency spike on the recording path) and wastes at most
// one chunk, unlike std::vector's doubling.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace tremor {

template <typename T, std::size_t kChunk = (1u << 16)>
class ChunkedArray {
 public:
  // Makes room for one more element; false if memory ran out.
  bool reserve_next() noexcept { return size_ < chunks_.size() * kChunk || add_chunk(); }
  // Precondition: reserve_next() returned true since the last push.
  void push_reserved(const T& value) noexcept { (*this)[size_++] = value; }

  T& operator[](std::size_t i) noexcept { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](std::size_t i) const noexcept { return chunks_[i / kChunk][i % kChunk]; }
  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept {
    return chunks_.capacity() * sizeof(chunks_[0]) + chunks_.size() * kChunk * sizeof(T);
  }
  std::vector<T> to_vector() const {
    std::vector<T> out(size_);
    for (std::size_t i = 0; i < size_; ++i) out[i] = (*this)[i];
    return out;
  }

 private:
  // Out of line: the common case above stays a compare.
  __attribute__((noinline)) bool add_chunk() noexcept {
    try {
      chunks_.reserve(chunks_.size() + 1);
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(kChunk));
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace tremor
