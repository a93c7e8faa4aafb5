/* One MPI_Bcast of BYTES bytes from rank 0, timed after a barrier
 * from the last rank's start to the last rank's end (SMPI's MPI_Wtime is the simulated global clock:
 * the barrier's exit skew is not counted, as Phalanx's collectives start every node at once).
 * Built with smpicc and run by bench/collectives.py under smpirun, once per SMPI algorithm
 * (--cfg=smpi/bcast:NAME), on the same SimGrid platform as Phalanx's schedules. Every byte
 * received is checked. */
#include <mpi.h>
#include "timed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(size_t i) { return (unsigned char)((i * 131u + 7u) & 0xff); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 2048;
  unsigned char *buf = malloc(bytes);
  for (size_t i = 0; i < bytes; i++)
    buf[i] = rank == 0 ? pattern(i) : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  double end = MPI_Wtime();
  int ok = 1;
  for (size_t i = 0; i < bytes; i++)
    ok &= buf[i] == pattern(i);
  report_timed(start, end, ok);
  free(buf);
  MPI_Finalize();
  return 0;
}
