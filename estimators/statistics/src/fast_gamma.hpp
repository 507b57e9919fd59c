// Γ and ln Γ from Boost.Math without its default promotion of double to long
// double (x87 arithmetic made a MOM fit 3× slower); still accurate to a few ulp.
// Errors return ±inf or NaN instead of throwing (Boost's default): an extreme
// sample (the fuzzer found 1e308 values with k far beyond any real fit) must
// give an unusable fit, never an exception inside the host's MPI_Finalize.
#pragma once

#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/gamma.hpp>

namespace tremor::estimators::detail {

using DoublePrecisionPolicy =
    boost::math::policies::policy<boost::math::policies::promote_double<false>,
                                  boost::math::policies::overflow_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::domain_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::pole_error<boost::math::policies::errno_on_error>,
                                  boost::math::policies::evaluation_error<boost::math::policies::errno_on_error>>;

inline double gamma_function(double x) { return boost::math::tgamma(x, DoublePrecisionPolicy()); }
inline double log_gamma(double x) { return boost::math::lgamma(x, DoublePrecisionPolicy()); }

}  // namespace tremor::estimators::detail
