// The forwarding entries of libtremor for one call, built as the library
// builds them: TREMOR_FORWARDING_ENTRY comes from interpose/wrapper_support.hpp
// (run.sh copies its AArch64 definition into forwarding_entry.hpp), the flag
// and the next pointer are hidden, the entries exported.
#include "forwarding_entry.hpp"

extern "C" {
[[gnu::visibility("hidden")]] bool tremor_forward_only = false;
[[gnu::visibility("hidden"), gnu::used]] void* tremor_next_MPI_Send = nullptr;
// Tremor's wrapper: the fake's weighted sum plus a mark.
[[gnu::visibility("hidden"), gnu::used]] int tremor_record_MPI_Send(int a0, int a1, int a2, int a3, int a4, int a5,
                                                                    int a6, int a7, int a8, int a9) {
  return 1000000 + a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8 + 10 * a9;
}
// What mpi_library_check.cpp and forward_every_mpi_call() do before main.
[[gnu::visibility("default")]] void entries_set(bool forward_only, void* next) {
  tremor_forward_only = forward_only;
  tremor_next_MPI_Send = next;
}
}

TREMOR_FORWARDING_ENTRY(MPI_Send, tremor_record_MPI_Send, tremor_next_MPI_Send)
TREMOR_FORWARDING_ENTRY(PMPI_Send, tremor_record_MPI_Send, tremor_next_MPI_Send)
