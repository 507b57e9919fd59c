// One quantized metric of one process: a 2-byte log code per segment
// (tremor/log_code.hpp). Appending is a compare, a multiply and a few shifts;
// the bins (one per code used) are made at finalize.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tremor/chunked_array.hpp"
#include "tremor/log_code.hpp"
#include "tremor/run_data.hpp"

namespace tremor {

// Bins ascending by value (one per code used, Bin::code set) and, per stored
// sample, the dense index of its bin.
struct QuantizedColumnResult {
  BinTable bins;
  std::vector<std::uint16_t> index;
};

// The bin of `count` samples of one code.
inline Bin code_bin(std::uint16_t code, std::uint64_t count, CodeScale scale) noexcept {
  const double value = decode_value(code, scale);
  return Bin{.sum = value * static_cast<double>(count), .count = count, .min = value, .max = value, .code = code};
}

// Bins of the codes code_of(0..n-1) and each sample's dense index.
template <typename CodeOf>
QuantizedColumnResult bin_codes(std::size_t n, CodeScale scale, CodeOf code_of) {
  constexpr std::size_t kCodes = std::size_t{kMaxCode} + 1;
  std::vector<std::uint64_t> count(kCodes, 0);
  for (std::size_t i = 0; i < n; ++i) ++count[code_of(i)];
  QuantizedColumnResult out;
  std::vector<std::uint16_t> dense(kCodes, 0);
  for (std::size_t code = 0; code < kCodes; ++code) {
    if (count[code] == 0) continue;
    dense[code] = static_cast<std::uint16_t>(out.bins.size());
    out.bins.push_back(code_bin(static_cast<std::uint16_t>(code), count[code], scale));
  }
  out.index.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.index[i] = dense[code_of(i)];
  return out;
}

class CodeColumn {
 public:
  explicit CodeColumn(CodeScale scale = CodeScale::seconds) noexcept : scale_(scale) {}

  // Makes room for one more sample; false if memory ran out.
  bool reserve_next() noexcept { return codes_.reserve_next(); }
  // Precondition: reserve_next() returned true since the last append.
  // Non-finite values are stored as 0 and counted.
  void append_reserved(double value) noexcept {
    non_finite_ += !std::isfinite(value);
    codes_.push_reserved(encode_value(value, scale_));
  }
  bool append(double value) noexcept {
    if (!reserve_next()) return false;
    append_reserved(value);
    return true;
  }

  QuantizedColumnResult finalize() const {
    return bin_codes(codes_.size(), scale_, [this](std::size_t i) { return codes_[i]; });
  }
  std::size_t size() const noexcept { return codes_.size(); }
  std::uint16_t code(std::size_t sample) const noexcept { return codes_[sample]; }
  CodeScale scale() const noexcept { return scale_; }
  std::uint64_t non_finite_count() const noexcept { return non_finite_; }
  std::size_t memory_bytes() const noexcept { return sizeof(*this) + codes_.memory_bytes(); }

 private:
  CodeScale scale_;
  ChunkedArray<std::uint16_t> codes_;
  std::uint64_t non_finite_ = 0;
};

}  // namespace tremor
