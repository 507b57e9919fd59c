/* Exact I/O accounting test. Phases, each closed by MPI_Barrier(MPI_COMM_WORLD)
 * so each lands in its own segment:
 *   0: POSIX  open, write 1000, pwrite 500, close                 (1 open, 2 writes, 1500 B, 1 close)
 *   1: POSIX  open, read 700, pread 300, readv 2x100, close       (1 open, 3 reads, 1200 B, 1 close)
 *   2: stdio  fopen, fwrite 4x256, fclose, fopen, fread 3x100, fclose (2 opens, 1 write 1024 B, 1 read 300 B, 2 closes)
 *   3: MPI-IO File_open, write_at 2048 B, read_at 1024 B, close   (1 open, 1 write, 1 read, 1 close;
 *      the POSIX calls ROMIO/OMPIO make inside are not counted again)
 *   4: nothing (the last segment, closed by MPI_Finalize)
 * Usage: io_app DIR
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* dir = argc > 1 ? argv[1] : "/tmp";
  char path[4096], mpath[4096];
  snprintf(path, sizeof path, "%s/io_app_%d_%d.dat", dir, (int)getpid(), rank);
  snprintf(mpath, sizeof mpath, "%s/io_app_mpiio_%d_%d.dat", dir, (int)getpid(), rank);
  static char buf[4096];
  memset(buf, 'a', sizeof buf);
  int failures = 0;

  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  failures += write(fd, buf, 1000) != 1000;
  failures += pwrite(fd, buf, 500, 1000) != 500;
  close(fd);
  MPI_Barrier(MPI_COMM_WORLD);

  fd = open(path, O_RDONLY);
  failures += read(fd, buf, 700) != 700;
  failures += pread(fd, buf, 300, 0) != 300;
  struct iovec iov[2] = {{buf, 100}, {buf + 100, 100}};
  failures += readv(fd, iov, 2) != 200;
  close(fd);
  MPI_Barrier(MPI_COMM_WORLD);

  FILE* f = fopen(path, "w");
  failures += fwrite(buf, 256, 4, f) != 4;
  fclose(f);
  f = fopen(path, "r");
  failures += fread(buf, 100, 3, f) != 3;
  fclose(f);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_File fh;
  MPI_File_open(MPI_COMM_SELF, mpath, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_File_write_at(fh, 0, buf, 2048, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_File_read_at(fh, 0, buf, 1024, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);

  unlink(path);
  unlink(mpath);
  if (failures) fprintf(stderr, "io_app: %d I/O calls failed\n", failures);
  MPI_Finalize();
  return failures != 0;
}
