/* Argument corner cases of the wrappers, one phase per segment.
 *
 * Byte rule expected (interpose/mpi_calls.py): bytes = count x PMPI_Type_size
 * of the datatype, whatever its extent; blocking receives count the bytes that
 * arrived (from the status, also with MPI_STATUS_IGNORE); nonblocking
 * receives count the posted size; persistent requests count at each
 * MPI_Start/MPI_Startall, not at *_init; sends count what was asked even to
 * MPI_PROC_NULL; an IN_PLACE contribution to a gather is not sent. Reduce
 * and Allreduce count count x size each way on every contributor (also with
 * IN_PLACE). Needs an even number of ranks: rank r talks to r^1. */
#include <mpi.h>
#include <string.h>

#include "expect.h"

static int rank, size, peer;

/* Lower rank of a pair sends first, so blocking exchanges cannot deadlock. */
static void exchange(const void* out, int out_count, MPI_Datatype out_type, void* in, int in_count,
                     MPI_Datatype in_type, MPI_Status* status) {
  if (rank < peer) {
    CHECK_MPI(MPI_Send(out, out_count, out_type, peer, 1, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Recv(in, in_count, in_type, peer, 1, MPI_COMM_WORLD, status));
  } else {
    CHECK_MPI(MPI_Recv(in, in_count, in_type, peer, 1, MPI_COMM_WORLD, status));
    CHECK_MPI(MPI_Send(out, out_count, out_type, peer, 1, MPI_COMM_WORLD));
  }
}

static void close_with_barrier(void) {
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");
}

static void in_place_collectives(void) {
  int values[10], reduced[6], gathered_ints[3 * 64], i;
  double gathered[5 * 64];
  REQUIRE(size <= 64);
  for (i = 0; i < 10; ++i) values[i] = rank;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, values, 10, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  REQUIRE(values[9] == size * (size - 1) / 2);
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_add(BYTES_SENT, 10 * sizeof(int));
  expect_add(BYTES_RECEIVED, 10 * sizeof(int));
  expect_close("MPI_Allreduce");

  for (i = 0; i < 5; ++i) gathered[5 * rank + i] = rank;
  if (rank == 0) {
    CHECK_MPI(MPI_Gather(MPI_IN_PLACE, 5, MPI_DOUBLE, gathered, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    REQUIRE(gathered[5 * (size - 1)] == size - 1);
    expect_add(BYTES_RECEIVED, 5 * sizeof(double) * (unsigned)size);
  } else {
    CHECK_MPI(MPI_Gather(&gathered[5 * rank], 5, MPI_DOUBLE, NULL, 0, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    expect_add(BYTES_SENT, 5 * sizeof(double));
  }
  expect_add(COLL_ALL_TO_ONE, 1);
  for (i = 0; i < 6; ++i) reduced[i] = 1;
  if (rank == 0) {
    CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, reduced, 6, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    REQUIRE(reduced[5] == size);
    expect_add(BYTES_RECEIVED, 6 * sizeof(int));
  } else {
    CHECK_MPI(MPI_Reduce(reduced, NULL, 6, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
  }
  expect_add(BYTES_SENT, 6 * sizeof(int));
  expect_add(COLL_ALL_TO_ONE, 1);
  for (i = 0; i < 3; ++i) gathered_ints[3 * rank + i] = rank + 1;
  CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered_ints, 3, MPI_INT, MPI_COMM_WORLD));
  REQUIRE(gathered_ints[3 * size - 1] == size);
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_add(BYTES_RECEIVED, 3 * sizeof(int) * (unsigned)size);
  expect_close("MPI_Allgather");
}

/* MPI_BOTTOM with a struct type of absolute addresses: 3 ints + 2 doubles. */
static void bottom_with_struct(void) {
  static int ints[3];
  static double doubles[2];
  int lengths[2] = {3, 2}, type_size = 0;
  MPI_Aint addresses[2];
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, absolute;
  MPI_Status status;
  int received = -1;
  const unsigned long long bytes = 3 * sizeof(int) + 2 * sizeof(double);
  CHECK_MPI(MPI_Get_address(ints, &addresses[0]));
  CHECK_MPI(MPI_Get_address(doubles, &addresses[1]));
  CHECK_MPI(MPI_Type_create_struct(2, lengths, addresses, types, &absolute));
  CHECK_MPI(MPI_Type_commit(&absolute));
  CHECK_MPI(MPI_Type_size(absolute, &type_size));
  REQUIRE((unsigned long long)type_size == bytes);
  ints[2] = rank;
  doubles[1] = rank;
  /* Send and receive in place: the values just swap within the pair. */
  if (rank < peer) {
    CHECK_MPI(MPI_Send(MPI_BOTTOM, 1, absolute, peer, 2, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Recv(MPI_BOTTOM, 1, absolute, peer, 2, MPI_COMM_WORLD, &status));
  } else {
    int keep_int = ints[2];
    double keep_double = doubles[1];
    CHECK_MPI(MPI_Recv(MPI_BOTTOM, 1, absolute, peer, 2, MPI_COMM_WORLD, &status));
    int got_int = ints[2];
    double got_double = doubles[1];
    ints[2] = keep_int;
    doubles[1] = keep_double;
    CHECK_MPI(MPI_Send(MPI_BOTTOM, 1, absolute, peer, 2, MPI_COMM_WORLD));
    ints[2] = got_int;
    doubles[1] = got_double;
  }
  CHECK_MPI(MPI_Get_count(&status, absolute, &received));
  REQUIRE(received == 1 && ints[2] == peer && doubles[1] == peer);
  expect_p2p(SEND_BLOCKING, RECV_BLOCKING, bytes);
  CHECK_MPI(MPI_Bcast(MPI_BOTTOM, 1, absolute, 0, MPI_COMM_WORLD));
  REQUIRE(ints[2] == 1 && doubles[1] == 1); /* rank 0 holds rank 1's values */
  expect_add(COLL_ONE_TO_ALL, 1);
  expect_add(rank == 0 ? BYTES_SENT : BYTES_RECEIVED, bytes);
  CHECK_MPI(MPI_Type_free(&absolute));
  close_with_barrier();
}

static void zero_counts_proc_null_status_ignore(void) {
  int ints[100] = {0}, zero_sum = 0;
  char text[100];
  MPI_Status status;
  MPI_Request requests[2];
  int received = -1;
  exchange(ints, 0, MPI_INT, ints, 10, MPI_INT, MPI_STATUS_IGNORE);
  expect_p2p(SEND_BLOCKING, RECV_BLOCKING, 0);

  CHECK_MPI(MPI_Send(ints, 100, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD));
  expect_add(SEND_BLOCKING, 1);
  expect_add(BYTES_SENT, 100 * sizeof(int));
  CHECK_MPI(MPI_Recv(ints, 100, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &received));
  REQUIRE(received == 0 && status.MPI_SOURCE == MPI_PROC_NULL);
  expect_add(RECV_BLOCKING, 1);
  CHECK_MPI(MPI_Isend(ints, 5, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Irecv(ints, 7, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  expect_add(SEND_NONBLOCKING, 1);
  expect_add(BYTES_SENT, 5 * sizeof(int));
  expect_add(RECV_NONBLOCKING, 1);
  expect_add(BYTES_RECEIVED, 7 * sizeof(int));

  /* 30 bytes arrive in a 100-byte buffer; the status is ignored. */
  memset(text, 'x', sizeof text);
  exchange(text, 30, MPI_CHAR, text, 100, MPI_CHAR, MPI_STATUS_IGNORE);
  expect_p2p(SEND_BLOCKING, RECV_BLOCKING, 30);

  CHECK_MPI(MPI_Allreduce(ints, &zero_sum, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Allreduce");
}

/* 4 blocks of 2 doubles, stride 5: size 64 bytes, extent 136 bytes. */
static void vector_type(void) {
  double out[2 * 17], in[2 * 17];
  MPI_Datatype strided;
  MPI_Aint lower = 0, extent = 0;
  MPI_Request requests[2];
  MPI_Status status;
  int type_size = 0, received = -1, i;
  CHECK_MPI(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  CHECK_MPI(MPI_Type_size(strided, &type_size));
  CHECK_MPI(MPI_Type_get_extent(strided, &lower, &extent));
  REQUIRE(type_size == 64 && extent == 136);
  for (i = 0; i < 2 * 17; ++i) out[i] = rank;
  exchange(out, 2, strided, in, 2, strided, &status);
  CHECK_MPI(MPI_Get_count(&status, strided, &received));
  REQUIRE(received == 2 && in[17 + 16] == peer);
  expect_p2p(SEND_BLOCKING, RECV_BLOCKING, 2 * 64);
  CHECK_MPI(MPI_Irecv(in, 1, strided, peer, 4, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Isend(out, 1, strided, peer, 4, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  expect_p2p(SEND_NONBLOCKING, RECV_NONBLOCKING, 64);
  CHECK_MPI(MPI_Type_free(&strided));
  close_with_barrier();
}

static void persistent_requests(void) {
  int out[100], in[100], round;
  MPI_Request requests[2];
  for (round = 0; round < 100; ++round) out[round] = rank;
  CHECK_MPI(MPI_Recv_init(in, 100, MPI_INT, peer, 5, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Send_init(out, 100, MPI_INT, peer, 5, MPI_COMM_WORLD, &requests[1]));
  for (round = 0; round < 3; ++round) {
    CHECK_MPI(MPI_Startall(2, requests));
    CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    REQUIRE(in[99] == peer);
    expect_p2p(SEND_NONBLOCKING, RECV_NONBLOCKING, 100 * sizeof(int));
  }
  CHECK_MPI(MPI_Start(&requests[0]));
  CHECK_MPI(MPI_Start(&requests[1]));
  CHECK_MPI(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
  expect_p2p(SEND_NONBLOCKING, RECV_NONBLOCKING, 100 * sizeof(int));
  CHECK_MPI(MPI_Request_free(&requests[0]));
  CHECK_MPI(MPI_Request_free(&requests[1]));
  close_with_barrier();
}

/* A derived type freed and another created in its place, usually under the
 * same handle (MPICH reuses the slot, Open MPI's allocator the address): the
 * bytes must follow the new type's size, never a cached size of the old one. */
static void reused_type_handles(void) {
  double out[4 * 50] = {0}, in[4 * 50];
  MPI_Datatype first, freed, second;
  int round, sizes[2] = {3 * (int)sizeof(int), 50 * (int)sizeof(double)}, reused = 0;
  for (round = 0; round < 4; ++round) {
    const int small = round % 2 == 0;
    CHECK_MPI(MPI_Type_contiguous(small ? 3 : 50, small ? MPI_INT : MPI_DOUBLE, &first));
    CHECK_MPI(MPI_Type_commit(&first));
    exchange(out, 2, first, in, 2, first, MPI_STATUS_IGNORE);
    CHECK_MPI(MPI_Send(out, 1, first, MPI_PROC_NULL, 7, MPI_COMM_WORLD));
    expect_p2p(SEND_BLOCKING, RECV_BLOCKING, 2 * (unsigned long long)sizes[small ? 0 : 1]);
    expect_add(SEND_BLOCKING, 1);
    expect_add(BYTES_SENT, (unsigned long long)sizes[small ? 0 : 1]);
    freed = first;
    CHECK_MPI(MPI_Type_free(&first));
    CHECK_MPI(MPI_Type_contiguous(small ? 50 : 3, small ? MPI_DOUBLE : MPI_INT, &second));
    CHECK_MPI(MPI_Type_commit(&second));
    CHECK_MPI(MPI_Send(out, 1, second, MPI_PROC_NULL, 7, MPI_COMM_WORLD));
    expect_add(SEND_BLOCKING, 1);
    expect_add(BYTES_SENT, (unsigned long long)sizes[small ? 1 : 0]);
    reused += memcmp(&freed, &second, sizeof freed) == 0;
    CHECK_MPI(MPI_Type_free(&second));
  }
  if (rank == 0) printf("arguments_app: %d of 4 freed type handles were reused\n", reused);
  close_with_barrier();
}

/* Request arrays holding MPI_REQUEST_NULL, completed by each completion call. */
static void request_arrays(void) {
  int out[8] = {0}, in[8], method, index, flag, outcount, indices[4], done;
  MPI_Request requests[4];
  MPI_Status statuses[4];
  for (method = 0; method < 4; ++method) {
    requests[1] = requests[3] = MPI_REQUEST_NULL;
    out[7] = rank + method;
    CHECK_MPI(MPI_Irecv(in, 8, MPI_INT, peer, 6, MPI_COMM_WORLD, &requests[0]));
    CHECK_MPI(MPI_Isend(out, 8, MPI_INT, peer, 6, MPI_COMM_WORLD, &requests[2]));
    expect_p2p(SEND_NONBLOCKING, RECV_NONBLOCKING, 8 * sizeof(int));
    if (method == 0) {
      CHECK_MPI(MPI_Waitall(4, requests, statuses));
    } else if (method == 1) {
      for (flag = 0; !flag;) CHECK_MPI(MPI_Testall(4, requests, &flag, MPI_STATUSES_IGNORE));
    } else if (method == 2) {
      for (done = 0; done < 3; ++done) {
        CHECK_MPI(MPI_Waitany(4, requests, &index, MPI_STATUS_IGNORE));
        if (index == MPI_UNDEFINED) break;
      }
      REQUIRE(done == 2);
    } else {
      for (outcount = 0; outcount != MPI_UNDEFINED;) CHECK_MPI(MPI_Waitsome(4, requests, &outcount, indices, statuses));
    }
    REQUIRE(requests[0] == MPI_REQUEST_NULL && requests[2] == MPI_REQUEST_NULL);
    REQUIRE(in[7] == peer + method);
  }
  CHECK_MPI(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE)); /* all null: returns at once */
  close_with_barrier();
}

/* The vector, w and scan forms of the nonblocking collectives: rank i
 * contributes i + 1 elements, so every byte rule sees unequal counts. The
 * root gathers in place and sends nothing to itself. */
enum { MAX_RANKS = 64, TRIANGLE = MAX_RANKS * (MAX_RANKS + 1) / 2 };
static void nonblocking_vector_collectives(void) {
  static int gathered[TRIANGLE], mine[MAX_RANKS], counts[MAX_RANKS], displs[MAX_RANKS];
  static double scattered[2 * TRIANGLE], received[2 * MAX_RANKS];
  static unsigned char w_out[MAX_RANKS * (MAX_RANKS + 1) * sizeof(double)],
      w_in[MAX_RANKS * MAX_RANKS * sizeof(double)];
  int w_send_counts[MAX_RANKS], w_send_displs[MAX_RANKS], w_recv_counts[MAX_RANKS], w_recv_displs[MAX_RANKS];
  MPI_Datatype w_send_types[MAX_RANKS], w_recv_types[MAX_RANKS];
  int scan_in[3], scan_out[3] = {-1, -1, -1}, reduce_in[TRIANGLE], reduce_out[MAX_RANKS];
  MPI_Request requests[5];
  const unsigned long long triangle = (unsigned long long)size * (size + 1) / 2;
  const size_t own_type = rank % 2 == 0 ? sizeof(int) : sizeof(double);
  unsigned long long w_bytes_sent = 0;
  int i, offset = 0, byte_offset = 0;
  REQUIRE(size <= MAX_RANKS);
  for (i = 0; i < size; ++i) {
    counts[i] = i + 1;
    displs[i] = offset;
    offset += i + 1;
  }
  for (i = 0; i <= rank; ++i) mine[i] = rank;
  for (i = 0; i < 2 * (int)triangle; ++i) scattered[i] = i;
  /* Alltoallw: i + 1 elements to rank i, ints to even ranks, doubles to odd. */
  for (i = 0; i < size; ++i) {
    w_send_types[i] = i % 2 == 0 ? MPI_INT : MPI_DOUBLE;
    w_send_counts[i] = i + 1;
    w_send_displs[i] = byte_offset;
    byte_offset += (i + 1) * (int)(i % 2 == 0 ? sizeof(int) : sizeof(double));
    w_recv_types[i] = rank % 2 == 0 ? MPI_INT : MPI_DOUBLE;
    w_recv_counts[i] = rank + 1;
    w_recv_displs[i] = i * (rank + 1) * (int)own_type;
  }
  w_bytes_sent = (unsigned long long)byte_offset;
  memset(w_out, rank + 1, (size_t)byte_offset);
  for (i = 0; i < 3; ++i) scan_in[i] = rank + i;
  for (i = 0; i < (int)triangle; ++i) reduce_in[i] = rank;

  if (rank == 0) {
    memcpy(gathered, mine, sizeof(int));
    CHECK_MPI(
        MPI_Igatherv(MPI_IN_PLACE, 0, MPI_INT, gathered, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &requests[0]));
  } else {
    CHECK_MPI(MPI_Igatherv(mine, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, MPI_COMM_WORLD, &requests[0]));
  }
  CHECK_MPI(MPI_Iscatterv(scattered, counts, displs, MPI_DOUBLE, received, rank + 1, MPI_DOUBLE, size - 1,
                          MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Ialltoallw(w_out, w_send_counts, w_send_displs, w_send_types, w_in, w_recv_counts, w_recv_displs,
                           w_recv_types, MPI_COMM_WORLD, &requests[2]));
  CHECK_MPI(MPI_Iexscan(scan_in, scan_out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[3]));
  CHECK_MPI(MPI_Ireduce_scatter(reduce_in, reduce_out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[4]));
  CHECK_MPI(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));

  if (rank == 0) {
    REQUIRE(gathered[triangle - 1] == size - 1);
    expect_add(BYTES_RECEIVED, triangle * sizeof(int));
  } else {
    expect_add(BYTES_SENT, (unsigned long long)(rank + 1) * sizeof(int));
  }
  expect_add(COLL_ALL_TO_ONE, 1);
  REQUIRE(received[rank] == displs[rank] + rank); /* scattered[i] == i */
  if (rank == size - 1) expect_add(BYTES_SENT, triangle * sizeof(double));
  expect_add(BYTES_RECEIVED, (unsigned long long)(rank + 1) * sizeof(double));
  expect_add(COLL_ONE_TO_ALL, 1);
  REQUIRE(w_in[size * (rank + 1) * own_type - 1] == size);
  expect_add(BYTES_SENT, w_bytes_sent);
  expect_add(BYTES_RECEIVED, (unsigned long long)size * (rank + 1) * own_type);
  if (rank > 0) REQUIRE(scan_out[2] == rank * (rank - 1) / 2 + 2 * rank);
  expect_add(BYTES_SENT, 3 * sizeof(int));
  expect_add(BYTES_RECEIVED, 3 * sizeof(int));
  REQUIRE(reduce_out[rank] == size * (size - 1) / 2);
  expect_add(BYTES_SENT, triangle * sizeof(int));
  expect_add(BYTES_RECEIVED, (unsigned long long)(rank + 1) * sizeof(int));
  expect_add(COLL_ALL_TO_ALL, 3);
  close_with_barrier();
}

int main(int argc, char** argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  REQUIRE(size % 2 == 0);
  peer = rank ^ 1;
  in_place_collectives();
  bottom_with_struct();
  zero_counts_proc_null_status_ignore();
  vector_type();
  persistent_requests();
  request_arrays();
  reused_type_handles();
  nonblocking_vector_collectives();
  CHECK_MPI(MPI_Finalize());
  expect_write(rank);
  if (rank == 0) printf("arguments_app: all phases completed on %d ranks\n", size);
  return 0;
}
