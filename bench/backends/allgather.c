/* One MPI_Allgather of BLOCK bytes per rank, timed after a barrier
 * from the last rank's start to the last rank's end (SMPI's MPI_Wtime is the simulated global clock:
 * the barrier's exit skew is not counted, as Phalanx's collectives start every node at once).
 * Built with smpicc and run by bench/collectives.py under smpirun, once per SMPI algorithm
 * (--cfg=smpi/allgather:NAME), on the same SimGrid platform as Phalanx's schedules. Every byte
 * received is checked. */
#include <mpi.h>
#include "timed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int rank, size_t i) {
  return (unsigned char)((i * 131u + (size_t)rank * 29u + 7u) & 0xff);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t block = argc > 1 ? (size_t)atol(argv[1]) : 2048;
  unsigned char *send = malloc(block), *recv = calloc(block * size, 1);
  for (size_t i = 0; i < block; i++)
    send[i] = pattern(rank, i);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Allgather(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE, MPI_COMM_WORLD);
  double end = MPI_Wtime();
  int ok = 1;
  for (int p = 0; p < size; p++)
    for (size_t i = 0; i < block; i++)
      ok &= recv[(size_t)p * block + i] == pattern(p, i);
  report_timed(start, end, ok);
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
