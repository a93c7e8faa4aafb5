/* One MPI_Allreduce (MPI_SUM) of BYTES bytes of doubles (BYTES / 8 of them, at least one), timed
 * after a barrier from the last rank's start to the last rank's end (SMPI's MPI_Wtime is the
 * simulated global clock: the barrier's exit skew is not counted). Built with smpicc and run by
 * bench/collectives.py under smpirun, once per SMPI algorithm (--cfg=smpi/allreduce:NAME), on the
 * same SimGrid platform as Phalanx's schedules. Every element of the result is checked (the sums
 * are small integers, exact in double). Computation is not simulated (smpi/simulate-computation:no),
 * so the sums cost no simulated time, as Phalanx's combining does not on the SimGrid backend. */
#include <mpi.h>
#include "timed.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? atol(argv[1]) : 8;
  int count = bytes / 8 > 0 ? (int)(bytes / 8) : 1;
  double *send = malloc(sizeof(double) * count), *recv = malloc(sizeof(double) * count);
  for (int i = 0; i < count; i++)
    send[i] = (double)(rank + (i % 1000));
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double end = MPI_Wtime();
  int ok = 1;
  double ranks = (double)size * (size - 1) / 2.0;
  for (int i = 0; i < count; i++)
    ok &= recv[i] == ranks + (double)size * (i % 1000);
  report_timed(start, end, ok);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
