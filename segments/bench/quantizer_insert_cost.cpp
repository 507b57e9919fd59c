// Instruction count of StreamingQuantizer::insert on a full 256-bin table,
// for callgrind (wall-time benchmarks are noisy on shared machines):
//   valgrind --tool=callgrind --toggle-collect='*measured_inserts*'
//       quantizer_insert_cost 100000          (total Ir / 100000)
// Log-normal values like segment durations; the table is filled first.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "tremor/quantizer.hpp"

namespace {

__attribute__((noinline)) unsigned measured_inserts(tremor::StreamingQuantizer& quantizer,
                                                    const std::vector<double>& values) {
  unsigned checksum = 0;
  for (const double value : values) checksum += quantizer.insert(value);
  return checksum;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  std::mt19937_64 engine(11);
  std::lognormal_distribution<double> seconds(-7.0, 1.0);
  tremor::StreamingQuantizer quantizer;
  for (int i = 0; i < 4096; ++i) quantizer.insert(seconds(engine));
  std::vector<double> values(count);
  for (double& value : values) value = seconds(engine);
  std::printf("inserts %zu checksum %u\n", count, measured_inserts(quantizer, values));
  return 0;
}
