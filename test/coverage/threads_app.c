/* MPI_Init_thread at a chosen level, then point-to-point traffic from 4
 * worker bodies between world barriers of the main thread.
 *
 * usage: threads_app single|funneled|serialized|multiple [iterations]
 * single/funneled: the main thread runs the 4 bodies one after another;
 * serialized: each body runs on its own thread, one thread at a time;
 * multiple: the 4 threads run at once. Every level sends the same messages,
 * so the recorded per-segment totals (summed over threads) are the same and
 * known exactly (expect.h). Needs an even number of ranks: rank r talks to r^1. */
#include <mpi.h>
#include <pthread.h>
#include <string.h>

#include "expect.h"

enum { WORKERS = 4, MAX_MESSAGE = 64 * WORKERS };

struct worker {
  int index, peer, world_rank;
};

static int messages_of(int worker) { return 2 + worker; }
static int bytes_of(int worker) { return 64 * (worker + 1); }

/* Even workers use blocking Send/Recv (lower rank sends first, so the pair
 * cannot deadlock); odd workers use Isend/Irecv/Waitall. Tag = worker index,
 * so concurrent workers never match each other's messages. */
static void* worker_body(void* argument) {
  const struct worker* self = argument;
  char outgoing[MAX_MESSAGE], incoming[MAX_MESSAGE];
  const int bytes = bytes_of(self->index);
  int m;
  memset(outgoing, 'a' + self->index, sizeof outgoing);
  for (m = 0; m < messages_of(self->index); ++m) {
    if (self->index % 2 == 0) {
      MPI_Status status;
      int received = -1;
      if (self->world_rank < self->peer) {
        CHECK_MPI(MPI_Send(outgoing, bytes, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Recv(incoming, MAX_MESSAGE, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD, &status));
      } else {
        CHECK_MPI(MPI_Recv(incoming, MAX_MESSAGE, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD, &status));
        CHECK_MPI(MPI_Send(outgoing, bytes, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD));
      }
      CHECK_MPI(MPI_Get_count(&status, MPI_CHAR, &received));
      REQUIRE(received == bytes && incoming[0] == 'a' + self->index);
    } else {
      MPI_Request requests[2];
      CHECK_MPI(MPI_Irecv(incoming, bytes, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD, &requests[0]));
      CHECK_MPI(MPI_Isend(outgoing, bytes, MPI_CHAR, self->peer, self->index, MPI_COMM_WORLD, &requests[1]));
      CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
      REQUIRE(incoming[bytes - 1] == 'a' + self->index);
    }
  }
  return NULL;
}

static void expect_workers(void) {
  int w;
  for (w = 0; w < WORKERS; ++w) {
    const enum expect_feature send = w % 2 == 0 ? SEND_BLOCKING : SEND_NONBLOCKING;
    const enum expect_feature recv = w % 2 == 0 ? RECV_BLOCKING : RECV_NONBLOCKING;
    int m;
    /* A blocking receive counts what arrived; a nonblocking one its posted size. */
    for (m = 0; m < messages_of(w); ++m) expect_p2p(send, recv, (unsigned long long)bytes_of(w));
  }
}

static void run_workers(int level, struct worker workers[WORKERS]) {
  pthread_t threads[WORKERS];
  int w;
  if (level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED) {
    for (w = 0; w < WORKERS; ++w) worker_body(&workers[w]);
  } else if (level == MPI_THREAD_SERIALIZED) {
    for (w = 0; w < WORKERS; ++w) {
      REQUIRE(pthread_create(&threads[w], NULL, worker_body, &workers[w]) == 0);
      REQUIRE(pthread_join(threads[w], NULL) == 0);
    }
  } else {
    for (w = 0; w < WORKERS; ++w) REQUIRE(pthread_create(&threads[w], NULL, worker_body, &workers[w]) == 0);
    for (w = 0; w < WORKERS; ++w) REQUIRE(pthread_join(threads[w], NULL) == 0);
  }
}

static int level_from_name(const char* name) {
  if (strcmp(name, "single") == 0) return MPI_THREAD_SINGLE;
  if (strcmp(name, "funneled") == 0) return MPI_THREAD_FUNNELED;
  if (strcmp(name, "serialized") == 0) return MPI_THREAD_SERIALIZED;
  if (strcmp(name, "multiple") == 0) return MPI_THREAD_MULTIPLE;
  fprintf(stderr, "unknown thread level %s\n", name);
  exit(2);
}

int main(int argc, char** argv) {
  const int required = level_from_name(argc > 1 ? argv[1] : "multiple");
  const int iterations = argc > 2 ? atoi(argv[2]) : 3;
  struct worker workers[WORKERS];
  int provided = -1, rank = 0, size = 0, i, w;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, required, &provided));
  REQUIRE(provided >= required);
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  REQUIRE(size % 2 == 0);
  for (w = 0; w < WORKERS; ++w) {
    workers[w].index = w;
    workers[w].peer = rank ^ 1;
    workers[w].world_rank = rank;
  }

  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");
  for (i = 0; i < iterations; ++i) {
    run_workers(required, workers);
    expect_workers();
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    expect_add(COLL_ALL_TO_ALL, 1);
    expect_close("MPI_Barrier");
  }
  CHECK_MPI(MPI_Finalize());
  expect_write(rank);
  if (rank == 0) printf("threads_app: required %d provided %d, %d iterations\n", required, provided, iterations);
  return 0;
}
