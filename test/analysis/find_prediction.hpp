// The analysis tests' lookup of one prediction by method and factor.
#pragma once
#include <catch2/catch.hpp>
#include <string>

#include "tremor/analysis/run_analysis.hpp"

namespace tremor::test {

// The prediction of `method` at `factor`; fails the test when there is none.
inline const analysis::Prediction& find_prediction(const analysis::RunAnalysis& analysis, const std::string& method,
                                                   double factor) {
  for (const analysis::Prediction& p : analysis.predictions)
    if (p.method == method && p.factor == factor) return p;
  FAIL("no " << method << " prediction at factor " << factor);
  return analysis.predictions.front();
}

}  // namespace tremor::test
