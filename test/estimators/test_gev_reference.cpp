// GEV functions, PWM and MOM fits against vectors_gev_functions.json,
// vectors_gev_fits.json and vectors_gev_edge.json.
#include <catch2/catch.hpp>

#include "reference_vectors.hpp"
#include "tremor/estimators/gev.hpp"
#include "tremor/estimators/gev_fit.hpp"

namespace est = tremor::estimators;
using tremor::test::close;
using tremor::test::kClosedFormTolerance;
using tremor::test::kFitTolerance;

TEST_CASE("constants and closed forms match vectors_gev_functions", "[gev][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_gev_functions.json");
  const auto& constants = vectors["constants"];
  CHECK(est::kEulerGamma == constants["euler_gamma"].get<double>());
  CHECK(close(est::kEmmaPhi, constants["phi_emma"].get<double>(), 1e-15));
  CHECK(close(std::exp(-std::exp(-est::kEulerGamma)), est::kEmmaPhi, 1e-15));
  CHECK(close(est::gev_skewness(0.0), constants["gumbel_skewness"].get<double>(), 1e-10));

  for (const auto& row : vectors["quantile"]) {
    const est::GevParams params{row["xi"], row["alpha"], row["k"]};
    const double quantile = est::gev_quantile(params, row["F"]);
    INFO("k=" << params.k << " F=" << row["F"].get<double>());
    CHECK(close(quantile, row["quantile"].get<double>(), kClosedFormTolerance));
    CHECK(close(est::gev_cdf(params, quantile), row["F"].get<double>(), kClosedFormTolerance));
  }
  for (const auto& row : vectors["skew_function"]["values"]) {
    INFO("k=" << row["k"].get<double>());
    CHECK(close(est::gev_skewness(row["k"]), row["skew"].get<double>(), kClosedFormTolerance));
  }
  for (const auto& row : vectors["emma"]) {
    const est::GevParams params{row["xi"], row["alpha"], row["k"]};
    INFO("k=" << params.k << " m=" << row["m"].get<double>());
    CHECK(close(est::emma(params, row["m"]), row["emma"].get<double>(), kClosedFormTolerance));
    CHECK(close(est::exact_expected_maximum(params, row["m"]), row["exact_mean_max"].get<double>(),
                kClosedFormTolerance));
  }
  for (const auto& row : vectors["emma_minus_exact_over_alpha"]) {
    const est::GevParams unit{0.0, 1.0, row["k"]};
    const double difference = est::emma(unit, row["m"]) - est::exact_expected_maximum(unit, row["m"]);
    INFO("k=" << unit.k << " m=" << row["m"].get<double>());
    CHECK(close(difference, row["value"].get<double>(), kClosedFormTolerance, 1e-12));
  }
}

TEST_CASE("B(k) series joins the expm1(lgamma) form continuously", "[gev]") {
  CHECK(est::gamma_ratio_b(0.0) == -est::kEulerGamma);
  const double below = est::gamma_ratio_b(0.999999e-6);
  const double above = est::gamma_ratio_b(1.000001e-6);
  CHECK(close(below, above, 1e-9));
}

TEST_CASE("PWM parameters from L-moments and the exact tau3 inversion", "[gev][pwm][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_gev_functions.json");
  for (const auto& row : vectors["pwm_from_lmoments"]) {
    std::uint32_t flags = 0;
    const auto params = est::gev_from_l_moments(row["l1"], row["l2"], row["t3"], false, flags);
    INFO("t3=" << row["t3"].get<double>());
    CHECK(close(params.k, row["k"].get<double>(), kClosedFormTolerance, 1e-12));
    CHECK(close(params.scale, row["alpha"].get<double>(), kClosedFormTolerance));
    CHECK(close(params.loc, row["xi"].get<double>(), kClosedFormTolerance));
    CHECK(((flags & est::kPwmKOutOfRange) != 0) == (std::fabs(params.k) > 0.5));
    std::uint32_t refined_flags = 0;
    const auto refined = est::gev_from_l_moments(row["l1"], row["l2"], row["t3"], true, refined_flags);
    CHECK(close(refined.k, row["k_exact"].get<double>(), kFitTolerance, 1e-10));
  }
}

TEST_CASE("MOM parameters from moments, including the clamped ends", "[gev][mom][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_gev_functions.json");
  for (const auto& row : vectors["mom_from_moments"]) {
    std::uint32_t flags = 0;
    const auto params = est::gev_from_moments(row["mean"], row["sd"], row["skew"], flags);
    const std::string status = row["status"];
    INFO("skew=" << row["skew"].get<double>() << " status=" << status);
    CHECK(((flags & est::kKClampedLow) != 0) == (status == "clamped_k_lo"));
    CHECK(((flags & est::kKClampedHigh) != 0) == (status == "clamped_k_hi"));
    CHECK(close(params.k, row["k"].get<double>(), kFitTolerance, 1e-10));
    CHECK(close(params.scale, row["alpha"].get<double>(), kFitTolerance));
    CHECK(close(params.loc, row["xi"].get<double>(), kFitTolerance));
  }
}

namespace {

void check_pwm_case(const nlohmann::json& sample_json, const nlohmann::json& expected) {
  const std::vector<double> sample = sample_json.get<std::vector<double>>();
  const est::GevFit fit = est::fit_pwm(sample);
  CHECK(fit.pwm.b0 == Approx(expected["b0"].get<double>()).epsilon(kClosedFormTolerance));
  CHECK(close(fit.pwm.b1, expected["b1"], kClosedFormTolerance));
  CHECK(close(fit.pwm.b2, expected["b2"], kClosedFormTolerance));
  CHECK(close(fit.pwm.l2, expected["l2"], kFitTolerance));
  CHECK(close(fit.pwm.t3, expected["t3"], kFitTolerance));
  CHECK(close(fit.pwm.c, expected["c"], kFitTolerance, 1e-10));
  CHECK(close(fit.params.k, expected["k"], kFitTolerance, 1e-10));
  CHECK(close(fit.params.scale, expected["alpha"], kFitTolerance));
  CHECK(close(fit.params.loc, expected["xi"], kFitTolerance));
  CHECK(((fit.flags & est::kPwmKOutOfRange) == 0) == expected["approx_in_validated_range"].get<bool>());
  CHECK(((fit.flags & est::kLowN) != 0) == (sample.size() < 15));
  const est::GevFit refined = est::fit_pwm(sample, {.refine_by_newton = true});
  const auto& exact = expected["exact_tau3_inversion"];
  CHECK(close(refined.params.k, exact["k"], kFitTolerance, 1e-10));
  CHECK(close(refined.params.scale, exact["alpha"], kFitTolerance));
  CHECK(close(refined.params.loc, exact["xi"], kFitTolerance));
}

void check_mom_case(const nlohmann::json& sample_json, const nlohmann::json& expected, est::SkewnessKind skewness) {
  const std::vector<double> sample = sample_json.get<std::vector<double>>();
  const est::GevFit fit = est::fit_mom(sample, {.skewness = skewness});
  CHECK(close(fit.mom.mean, expected["mean"], kClosedFormTolerance));
  CHECK(close(fit.mom.sd, expected["sd"], kClosedFormTolerance));
  CHECK(close(fit.mom.skew, expected["skew_used"], kClosedFormTolerance, 1e-12));
  CHECK(close(fit.params.k, expected["k"], kFitTolerance, 1e-10));
  CHECK(close(fit.params.scale, expected["alpha"], kFitTolerance));
  CHECK(close(fit.params.loc, expected["xi"], kFitTolerance));
}

void check_projections(const est::GevFit& fit, const std::vector<int>& ms, const nlohmann::json& expected) {
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const est::Projection projection = est::project_maximum(fit, ms[i]);
    CHECK(projection.valid);
    CHECK(close(projection.value, expected[i], kFitTolerance));
  }
}

}  // namespace

TEST_CASE("PWM and MOM fits, EMMA and validity match vectors_gev_fits", "[gev][fit][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_gev_fits.json");
  const std::vector<int> ms = vectors["m_list"];
  for (const auto& c : vectors["cases"]) {
    SECTION(c["case"].get<std::string>()) {
      check_pwm_case(c["sample"], c["pwm"]);
      check_mom_case(c["sample"], c["mom"], est::SkewnessKind::adjusted);
      check_mom_case(c["sample"], c["mom_biased_skew"], est::SkewnessKind::biased);
      const std::vector<double> sample = c["sample"];
      const est::GevFit pwm = est::fit_pwm(sample);
      const est::GevFit mom = est::fit_mom(sample);
      check_projections(pwm, ms, c["emma"]["pwm"]);
      check_projections(mom, ms, c["emma"]["mom"]);
      for (std::size_t i = 0; i < ms.size(); ++i) {
        CHECK(close(est::exact_expected_maximum(pwm.params, ms[i]), c["emma"]["pwm_exact_gev_mean_max"][i],
                    kFitTolerance));
      }
      for (const auto& [name, fit] : {std::pair{"pwm", pwm}, std::pair{"mom", mom}}) {
        const auto& validity = c["validity"][name];
        CHECK(fit.usable() == validity["valid"].get<bool>());
        const char* bound = fit.params.k > 0 ? "upper_bound" : "lower_bound";
        REQUIRE(validity.contains(bound));
        CHECK(close(est::gev_end_point(fit.params), validity[bound], kFitTolerance));
        const bool nonphysical = fit.params.k < 0 && est::gev_end_point(fit.params) < 0;
        CHECK(((fit.flags & est::kNonphysicalLowerBound) != 0) == nonphysical);
      }
    }
  }
}

TEST_CASE("edge cases match vectors_gev_edge", "[gev][fit][reference]") {
  const auto vectors = tremor::test::load_reference("vectors_gev_edge.json");
  const std::vector<int> ms{2, 4, 8, 16};
  for (const auto& c : vectors["cases"]) {
    SECTION(c["name"].get<std::string>()) {
      const std::vector<double> sample = c["sample"];
      const est::GevFit pwm = est::fit_pwm(sample);
      const est::GevFit mom = est::fit_mom(sample);
      const std::string status = c["pwm"]["status"];
      if (status == "insufficient_n") {
        CHECK((pwm.flags & est::kInsufficientN));
        CHECK((mom.flags & est::kInsufficientN));
        CHECK_FALSE(pwm.usable());
        CHECK_FALSE(est::project_maximum(pwm, 16).valid);
      } else if (status == "degenerate") {
        for (const est::GevFit& fit : {pwm, mom}) {
          CHECK((fit.flags & est::kDegenerate));
          CHECK(fit.params.loc == c["pwm"]["xi"].get<double>());
          CHECK(fit.params.scale == 0.0);
          CHECK(est::project_maximum(fit, 16).value == c["pwm"]["xi"].get<double>());
        }
      } else {
        check_pwm_case(c["sample"], c["pwm"]);
        check_mom_case(c["sample"], c["mom"], est::SkewnessKind::adjusted);
        check_projections(pwm, ms, c["pwm_emma"]);
        check_projections(mom, ms, c["mom_emma"]);
      }
    }
  }
}
