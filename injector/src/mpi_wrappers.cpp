// MPI_ and PMPI_ wrappers, one pair per line of mpi_calls.inc (generated from
// the call table interpose/mpi_calls.py; a call's kind gives its family). Each
// wrapper may delay (see runtime.hpp) and then forwards to the next definition
// of the same symbol: alone, MPI_X reaches the MPI library's MPI_X; stacked behind
// the profiler, the profiler's PMPI_X call lands here and goes on to the MPI
// library's PMPI_X. Delays are logged under the MPI_ name either way.
#include <mpi.h>

#include "runtime.hpp"

#define TREMOR_INJECT_DEFINE(family, exported, canonical, params, args)                          \
  TREMOR_INJECT_EXPORT int exported params {                                                     \
    static std::atomic<void*> next{nullptr};                                                     \
    return tremor::inject::intercept(                                                            \
        tremor::inject::family, canonical, tremor::inject::next_definition(next, #exported),     \
        [&](void* function) { return reinterpret_cast<decltype(&::exported)>(function) args; }); \
  }

#define TREMOR_INJECT_MPI_CALL(family, name, params, args)             \
  TREMOR_INJECT_DEFINE(family, MPI_##name, "MPI_" #name, params, args) \
  TREMOR_INJECT_DEFINE(family, PMPI_##name, "MPI_" #name, params, args)

#include "mpi_calls.inc"

// Start and stop: never delayed, so not in the generated list. The MPI_ and
// PMPI_ forms share one body; start/finish run once whichever layer arrives first.
#define TREMOR_INJECT_LIFECYCLE(exported, params, args, before, after)                                               \
  TREMOR_INJECT_EXPORT int exported params {                                                                         \
    static std::atomic<void*> next{nullptr};                                                                         \
    const auto function = reinterpret_cast<decltype(&::exported)>(tremor::inject::next_definition(next, #exported)); \
    before;                                                                                                          \
    const int result = function args;                                                                                \
    after;                                                                                                           \
    return result;                                                                                                   \
  }

#define TREMOR_INJECT_INIT_PAIR(name, params, args)                                              \
  TREMOR_INJECT_LIFECYCLE(MPI_##name, params, args, (void)0, tremor::inject::start_after_init()) \
  TREMOR_INJECT_LIFECYCLE(PMPI_##name, params, args, (void)0, tremor::inject::start_after_init())

TREMOR_INJECT_INIT_PAIR(Init, (int* argc, char*** argv), (argc, argv))
TREMOR_INJECT_INIT_PAIR(Init_thread, (int* argc, char*** argv, int required, int* provided),
                        (argc, argv, required, provided))
TREMOR_INJECT_LIFECYCLE(MPI_Finalize, (), (), tremor::inject::finish_before_finalize(), (void)0)
TREMOR_INJECT_LIFECYCLE(PMPI_Finalize, (), (), tremor::inject::finish_before_finalize(), (void)0)
