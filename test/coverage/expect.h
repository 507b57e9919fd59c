/* Expected per-segment features, written by a coverage test program and
 * compared exactly with Tremor's run file by check_coverage.py.
 *
 * The program states what each phase does (calls and bytes, by the rule of
 * interpose/mpi_calls.py) as it does it; a phase ends with a call to
 * expect_close() naming the boundary collective that ends the segment.
 * Features a program never mentions are expected to be zero. The file is
 * written after MPI_Finalize, so writing it is not recorded as I/O. */
#ifndef TREMOR_COVERAGE_EXPECT_H
#define TREMOR_COVERAGE_EXPECT_H

#include <stdio.h>
#include <stdlib.h>

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC 12 takes
 * for a zero-sized array passed to a function writing statuses: a false
 * -Wstringop-overflow. These programs must pass it, so the warning is off. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

enum expect_feature {
  SEND_BLOCKING,
  SEND_NONBLOCKING,
  RECV_BLOCKING,
  RECV_NONBLOCKING,
  COLL_ONE_TO_ALL,
  COLL_ALL_TO_ONE,
  COLL_ALL_TO_ALL,
  BYTES_SENT,
  BYTES_RECEIVED,
  EXPECT_FEATURES
};
static const char* const expect_feature_names[EXPECT_FEATURES] = {
    "p2p_send_blocking", "p2p_send_nonblocking", "p2p_recv_blocking", "p2p_recv_nonblocking", "coll_one_to_all",
    "coll_all_to_one",   "coll_all_to_all",      "bytes_sent",        "bytes_received"};

enum { EXPECT_MAX_SEGMENTS = 64 };
struct expect_segment {
  const char* closing_call;
  unsigned long long value[EXPECT_FEATURES];
};
static struct expect_segment expect_segments[EXPECT_MAX_SEGMENTS];
static int expect_open_segment = 0;

static inline void expect_add(enum expect_feature feature, unsigned long long amount) {
  expect_segments[expect_open_segment].value[feature] += amount;
}

/* One message both ways: the usual pattern of a phase. */
static inline void expect_p2p(enum expect_feature send_kind, enum expect_feature recv_kind, unsigned long long bytes) {
  expect_add(send_kind, 1);
  expect_add(BYTES_SENT, bytes);
  expect_add(recv_kind, 1);
  expect_add(BYTES_RECEIVED, bytes);
}

static inline void expect_close(const char* closing_call) {
  expect_segments[expect_open_segment].closing_call = closing_call;
  if (expect_open_segment + 1 >= EXPECT_MAX_SEGMENTS) {
    fprintf(stderr, "expect.h: too many segments\n");
    abort();
  }
  ++expect_open_segment;
}

/* Call after MPI_Finalize: closes the last segment and writes
 * $COVERAGE_EXPECT_DIR/expect-<rank>.json (nothing when the variable is unset). */
static inline void expect_write(int world_rank) {
  const char* dir = getenv("COVERAGE_EXPECT_DIR");
  char path[4096];
  FILE* out;
  int s, f;
  expect_close("MPI_Finalize");
  if (dir == NULL) return;
  snprintf(path, sizeof path, "%s/expect-%d.json", dir, world_rank);
  out = fopen(path, "w");
  if (out == NULL) {
    perror(path);
    exit(3);
  }
  fprintf(out, "{\"rank\": %d, \"segments\": [\n", world_rank);
  for (s = 0; s < expect_open_segment; ++s) {
    fprintf(out, "  {\"closing_call\": \"%s\"", expect_segments[s].closing_call);
    for (f = 0; f < EXPECT_FEATURES; ++f)
      fprintf(out, ", \"%s\": %llu", expect_feature_names[f], expect_segments[s].value[f]);
    fprintf(out, "}%s\n", s + 1 < expect_open_segment ? "," : "");
  }
  fprintf(out, "]}\n");
  fclose(out);
}

/* A failed MPI call or a wrong result is a test failure, never ignored. */
#define CHECK_MPI(call)                                                                 \
  do {                                                                                  \
    int check_rc_ = (call);                                                             \
    if (check_rc_ != MPI_SUCCESS) {                                                     \
      fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, check_rc_); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                     \
    }                                                                                   \
  } while (0)
#define REQUIRE(condition)                                                     \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #condition); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                            \
    }                                                                          \
  } while (0)

#endif
