/* One MPI_Alltoall of BLOCK bytes per pair, timed with MPI_Wtime after a barrier (maximum over ranks).
 * Built with smpicc and run by bench/backends/run.py under smpirun, once per SMPI algorithm
 * (--cfg=smpi/alltoall:NAME), on the same SimGrid platform as Phalanx's schedules. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int block = argc > 1 ? atoi(argv[1]) : 2048;
  char *send = malloc((size_t)block * size), *recv = malloc((size_t)block * size);
  memset(send, rank & 0xff, (size_t)block * size);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  MPI_Alltoall(send, block, MPI_BYTE, recv, block, MPI_BYTE, MPI_COMM_WORLD);
  double elapsed = MPI_Wtime() - start, slowest = 0.0;
  int ok = 1;
  for (int p = 0; p < size; p++)
    ok &= recv[(size_t)p * block] == (char)(p & 0xff);
  int all_ok = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("{\"time_s\": %.12g, \"verified\": %s}\n", slowest, all_ok ? "true" : "false");
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
