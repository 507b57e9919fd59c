// The closing collective's own latency at a larger process count
// (docs/statistics.md#collective-latency). A tree or recursive-doubling
// collective (Barrier, Allreduce, Reduce, Bcast) over P processes takes
// ⌈log2 P⌉ rounds, each one message's cost (Hockney's model; Thakur,
// Rabenseifner & Gropp 2005): L(P) = α·⌈log2 P⌉. α comes from the base run
// alone: the low end (5 % quantile) of its least waits per segment (the part
// of the collective no rank avoids) over ⌈log2 P⌉.
#pragma once

#include <cstddef>
#include <random>
#include <span>
#include <vector>

namespace tremor::estimators {

/// ⌈log2 P⌉: the rounds of a tree collective over `processes` (0 for P <= 1).
double collective_rounds(double processes);

/// Per-segment growth of a collective whose latency is `latency_s` at
/// `processes`, at factor × the processes: latency·(rounds(f·P) − rounds(P)) / rounds(P).
/// 0 when the base has no rounds (P <= 1: nothing to learn α from) or f <= 1.
double collective_latency_growth(double latency_s, double processes, double factor);

/// Bootstrap replicas of the per-segment growth: [factor][replica]. Each
/// replica resamples the segments' least waits and takes their 5 % quantile
/// as the base latency (delays only lengthen a collective: its own cost is
/// the low end).
/// Empty (no least waits): every growth is 0.
std::vector<std::vector<double>> collective_latency_growth_replicas(std::span<const double> least_waits,
                                                                    double processes, std::span<const double> factors,
                                                                    std::size_t replicas, std::mt19937_64& engine);

/// The same in two steps: the replicas' base latencies (empty when every
/// growth is 0), then their growth. A replica's draws follow the earlier
/// replicas', so the first k latencies of more replicas are those of k: the
/// growth of fewer replicas is read from a prefix.
std::vector<double> collective_latency_replicas(std::span<const double> least_waits, double processes,
                                                std::size_t replicas, std::mt19937_64& engine);
/// Growth [factor][replica] of the first `replicas` of `latencies` (all 0 when it is empty).
std::vector<std::vector<double>> collective_latency_growth_of(std::span<const double> latencies, double processes,
                                                             std::span<const double> factors, std::size_t replicas);

}  // namespace tremor::estimators
