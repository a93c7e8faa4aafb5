/* What the collective benchmarks print (bench/collectives.py reads it): the time from the last
 * rank's start to the last rank's end (SMPI's MPI_Wtime is the simulated global clock, so the
 * barrier's exit skew is left out, as Phalanx's collectives start every node at once) and
 * whether every rank received the right bytes. */
#include <mpi.h>
#include <stdio.h>

static void report_timed(double start, double end, int ok) {
  double last_start = 0.0, last_end = 0.0;
  int all_ok = 0, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(&start, &last_start, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&end, &last_end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("{\"time_s\": %.12g, \"verified\": %s}\n", last_end - last_start, all_ok ? "true" : "false");
}
