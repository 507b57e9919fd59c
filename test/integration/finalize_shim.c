/* A stand-in stacked after libtremor (LD_PRELOAD="libtremor-X.so
 * libfinalize_shim.so"): Tremor's own MPI calls reach the next PMPI_X, so
 * this library sees its end-of-run traffic on its private communicator (any
 * communicator other than MPI_COMM_WORLD and MPI_COMM_SELF: the test
 * programs use only those) and can count it, slow it down or stall it.
 *
 *   FINALIZE_SHIM_COUNT_DIR=DIR   at PMPI_Finalize each rank writes
 *                                 DIR/count.RANK: "COLLECTIVES MESSAGES"
 *   FINALIZE_SHIM_DELAY=R:CALL:S  rank R sleeps S seconds before its first
 *                                 CALL (e.g. Igatherv) on such a communicator
 *   FINALIZE_SHIM_STALL=R:CALL    rank R's first CALL there never reports
 *                                 completion to MPI_Testall (a collective that
 *                                 hangs); the real request goes on
 * Only what Tremor's finalize uses is stalled through MPI_Testall.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long collectives, messages;
static MPI_Request hidden = MPI_REQUEST_NULL;
static int stall_armed = 1, delay_armed = 1;

static int world_rank(void) {
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

static int private_comm(MPI_Comm comm) { return comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF; }

/* "R:CALL[:S]" names this rank and call? */
static int selected(const char* variable, const char* call, double* seconds) {
  const char* value = getenv(variable);
  char name[64] = "";
  int rank = -1;
  double s = 0.0;
  if (value == NULL || sscanf(value, "%d:%63[^:]:%lf", &rank, name, &s) < 2) return 0;
  if (rank != world_rank() || strcmp(name, call) != 0) return 0;
  if (seconds) *seconds = s;
  return 1;
}

static void before(const char* call, MPI_Comm comm) {
  double seconds = 0.0;
  if (!private_comm(comm)) return;
  ++collectives;
  if (delay_armed && selected("FINALIZE_SHIM_DELAY", call, &seconds)) {
    struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    delay_armed = 0;
    nanosleep(&pause, NULL);
  }
}

static void after(const char* call, MPI_Comm comm, MPI_Request* request) {
  if (private_comm(comm) && stall_armed && selected("FINALIZE_SHIM_STALL", call, NULL)) {
    stall_armed = 0;
    hidden = *request;
  }
}

/* The next PMPI_X in the search order (memcpy: ISO C has no cast from an
 * object pointer to a function pointer). */
#define NEXT(name) next_##name()
#define DECLARE_NEXT(name, params)               \
  typedef int(*name##_fn) params;                \
  static name##_fn next_##name(void) {           \
    void* symbol = dlsym(RTLD_NEXT, "P" #name);  \
    name##_fn function;                          \
    memcpy(&function, &symbol, sizeof function); \
    return function;                             \
  }

#define NONBLOCKING(name, params, args) \
  DECLARE_NEXT(name, params)            \
  int P##name params {                  \
    before(#name + 4, comm);            \
    const int result = NEXT(name) args; \
    after(#name + 4, comm, request);    \
    return result;                      \
  }
#define BLOCKING(name, params, args) \
  DECLARE_NEXT(name, params)         \
  int P##name params {               \
    before(#name + 4, comm);         \
    return NEXT(name) args;          \
  }
#define MESSAGE(name, params, args)     \
  DECLARE_NEXT(name, params)            \
  int P##name params {                  \
    if (private_comm(comm)) ++messages; \
    return NEXT(name) args;             \
  }

NONBLOCKING(MPI_Iallreduce,
            (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request* request),
            (s, r, c, t, o, comm, request))
NONBLOCKING(MPI_Ireduce,
            (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm, MPI_Request* request),
            (s, r, c, t, o, root, comm, request))
NONBLOCKING(MPI_Igather,
            (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
             MPI_Request* request),
            (s, sc, st, r, rc, rt, root, comm, request))
NONBLOCKING(MPI_Igatherv,
            (const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* d, MPI_Datatype rt, int root,
             MPI_Comm comm, MPI_Request* request),
            (s, sc, st, r, rc, d, rt, root, comm, request))
NONBLOCKING(MPI_Ibcast, (void* b, int c, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* request),
            (b, c, t, root, comm, request))
NONBLOCKING(MPI_Ibarrier, (MPI_Comm comm, MPI_Request* request), (comm, request))
NONBLOCKING(MPI_Iallgather,
            (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm,
             MPI_Request* request),
            (s, sc, st, r, rc, rt, comm, request))
NONBLOCKING(MPI_Iscatter,
            (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
             MPI_Request* request),
            (s, sc, st, r, rc, rt, root, comm, request))
BLOCKING(MPI_Allreduce, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, MPI_Comm comm), (s, r, c, t, o, comm))
BLOCKING(MPI_Reduce, (const void* s, void* r, int c, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm),
         (s, r, c, t, o, root, comm))
BLOCKING(MPI_Gather,
         (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root, MPI_Comm comm),
         (s, sc, st, r, rc, rt, root, comm))
BLOCKING(MPI_Gatherv,
         (const void* s, int sc, MPI_Datatype st, void* r, const int* rc, const int* d, MPI_Datatype rt, int root,
          MPI_Comm comm),
         (s, sc, st, r, rc, d, rt, root, comm))
BLOCKING(MPI_Bcast, (void* b, int c, MPI_Datatype t, int root, MPI_Comm comm), (b, c, t, root, comm))
BLOCKING(MPI_Barrier, (MPI_Comm comm), (comm))
BLOCKING(MPI_Allgather, (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm comm),
         (s, sc, st, r, rc, rt, comm))
BLOCKING(MPI_Scatter,
         (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root, MPI_Comm comm),
         (s, sc, st, r, rc, rt, root, comm))
BLOCKING(MPI_Comm_dup, (MPI_Comm comm, MPI_Comm* out), (comm, out))
MESSAGE(MPI_Send, (const void* b, int c, MPI_Datatype t, int dest, int tag, MPI_Comm comm), (b, c, t, dest, tag, comm))
MESSAGE(MPI_Isend, (const void* b, int c, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* request),
        (b, c, t, dest, tag, comm, request))
MESSAGE(MPI_Recv, (void* b, int c, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Status* status),
        (b, c, t, source, tag, comm, status))
MESSAGE(MPI_Irecv, (void* b, int c, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Request* request),
        (b, c, t, source, tag, comm, request))

/* A stalled request stays pending: the others are tested (and progress). */
DECLARE_NEXT(MPI_Testall, (int, MPI_Request[], int*, MPI_Status[]))
int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  int at = -1;
  for (int i = 0; i < count; ++i)
    if (hidden != MPI_REQUEST_NULL && requests[i] == hidden) at = i;
  if (at < 0) return NEXT(MPI_Testall)(count, requests, flag, statuses);
  requests[at] = MPI_REQUEST_NULL;
  const int result = NEXT(MPI_Testall)(count, requests, flag, MPI_STATUSES_IGNORE);
  requests[at] = hidden;
  *flag = 0;
  return result;
}

DECLARE_NEXT(MPI_Finalize, (void))
int PMPI_Finalize(void) {
  const char* directory = getenv("FINALIZE_SHIM_COUNT_DIR");
  if (directory != NULL) {
    char path[4096];
    snprintf(path, sizeof path, "%s/count.%d", directory, world_rank());
    FILE* out = fopen(path, "w");
    if (out != NULL) {
      fprintf(out, "%ld %ld\n", collectives, messages);
      fclose(out);
    }
  }
  return NEXT(MPI_Finalize)();
}
