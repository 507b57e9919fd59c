/* Which communicators make a collective a segment boundary.
 *
 * Boundaries: collectives on a duplicate of MPI_COMM_WORLD, on a one-colour
 * split and on MPI_Comm_create with the world group. Not boundaries:
 * collectives on a half split, on an intercommunicator between the halves,
 * on MPI_COMM_SELF, and on a half split whose handle may be a recycled,
 * freed world duplicate (MPICH reuses handle values: both are printed).
 * Needs 2 or more ranks. Expected segments and features: expect.h. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "expect.h"

static unsigned long long handle_value(MPI_Comm comm) {
  /* MPICH handles are ints, Open MPI handles are pointers. */
  uintptr_t value = 0;
  memcpy(&value, &comm, sizeof comm < sizeof value ? sizeof comm : sizeof value);
  return (unsigned long long)value;
}

int main(int argc, char** argv) {
  int rank = 0, size = 0, one = 1, sum = 0, pair[2] = {1, 2}, pair_sum[2] = {0, 0};
  MPI_Comm duplicate, one_colour, created, half, inter, recycled_candidate, recycled_half;
  MPI_Group world_group;
  unsigned long long freed_handle, reused_handle;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  REQUIRE(size >= 2);
  const int lower_half = rank < size / 2;

  /* Segment 0: closed by a barrier on a duplicate of the world. */
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &duplicate));
  CHECK_MPI(MPI_Barrier(duplicate));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");

  /* Segment 1: closed by an Allreduce on a split where everyone has colour 0. */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &one_colour));
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, one_colour));
  REQUIRE(sum == size);
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_add(BYTES_SENT, sizeof(int));
  expect_add(BYTES_RECEIVED, sizeof(int));
  expect_close("MPI_Allreduce");

  /* Segment 2: closed by a barrier on MPI_Comm_create(world group). */
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, world_group, &created));
  CHECK_MPI(MPI_Group_free(&world_group));
  CHECK_MPI(MPI_Barrier(created));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");

  /* Segment 3: collectives on a half, an intercommunicator and MPI_COMM_SELF
   * are features only; the world barrier closes the segment. */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, lower_half, rank, &half));
  CHECK_MPI(MPI_Barrier(half));
  expect_add(COLL_ALL_TO_ALL, 1);
  CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower_half ? size / 2 : 0, 7, &inter));
  CHECK_MPI(MPI_Allreduce(pair, pair_sum, 2, MPI_INT, MPI_SUM, inter));
  REQUIRE(pair_sum[0] == (lower_half ? size - size / 2 : size / 2)); /* the other group's sum */
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_add(BYTES_SENT, 2 * sizeof(int));
  expect_add(BYTES_RECEIVED, 2 * sizeof(int));
  CHECK_MPI(MPI_Barrier(inter));
  expect_add(COLL_ALL_TO_ALL, 1);
  CHECK_MPI(MPI_Barrier(MPI_COMM_SELF));
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
  REQUIRE(sum == 1);
  expect_add(COLL_ALL_TO_ALL, 2);
  expect_add(BYTES_SENT, sizeof(int));
  expect_add(BYTES_RECEIVED, sizeof(int));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");

  /* Segment 4: a fresh world duplicate is judged (a boundary) and freed. */
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &recycled_candidate));
  CHECK_MPI(MPI_Barrier(recycled_candidate));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_close("MPI_Barrier");
  freed_handle = handle_value(recycled_candidate);
  CHECK_MPI(MPI_Comm_free(&recycled_candidate));

  /* Segment 5: a half split, possibly under the freed handle's value, must
   * not inherit the freed duplicate's "spans the world" decision. */
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, lower_half, rank, &recycled_half));
  reused_handle = handle_value(recycled_half);
  CHECK_MPI(MPI_Barrier(recycled_half));
  expect_add(COLL_ALL_TO_ALL, 1);
  CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  expect_add(COLL_ALL_TO_ALL, 1);
  expect_add(BYTES_SENT, sizeof(int));
  expect_add(BYTES_RECEIVED, sizeof(int));
  expect_close("MPI_Allreduce");

  CHECK_MPI(MPI_Comm_free(&recycled_half));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&half));
  CHECK_MPI(MPI_Comm_free(&created));
  CHECK_MPI(MPI_Comm_free(&one_colour));
  CHECK_MPI(MPI_Comm_free(&duplicate));
  CHECK_MPI(MPI_Finalize());
  expect_write(rank);
  if (rank == 0)
    printf("communicators_app: freed world duplicate 0x%llx, half split 0x%llx (%s handle)\n", freed_handle,
           reused_handle, freed_handle == reused_handle ? "reused" : "different");
  return 0;
}
