/* One message of BLOCK bytes from rank 0 to rank 1 (SMPI's MPI_Wtime is the simulated clock,
 * common to all ranks): checks that SMPI charges a lone Isend ois + latency + bytes / bandwidth
 * on the benchmark's platform, i.e. no hidden correction factor (bench/backends/run.py). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int block = argc > 1 ? atoi(argv[1]) : 16384;
  char *buf = calloc((size_t)block, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime(), end = 0.0;
  if (rank == 0) {
    MPI_Request request;  /* nonblocking, as the all-to-all algorithms send: smpi/ois applies */
    MPI_Isend(buf, block, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Recv(&end, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("{\"time_s\": %.12g}\n", end - start);
  } else if (rank == 1) {
    MPI_Recv(buf, block, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    end = MPI_Wtime();
    MPI_Send(&end, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
