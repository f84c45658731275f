/* Benchmark: MPI ping-pong between ranks 0 and 1, to calibrate the `net`
 * lanes of the analysis (rp_net_model): the one-way time of a message of
 * b bytes is modelled as latency + b / bandwidth. For each size, the
 * median over >= 5 runs of the round trip of `reps` messages; prints a
 * table and the least-squares fit, and with --json FILE writes
 * {"latency_us": L, "bandwidth_bps": B} for `reprise analyze --net`.
 * Run with mpirun -np 2 (more ranks wait). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int level, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *json = NULL;
  int runs = 7;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]) < 5 ? 5 : atoi(argv[++i - 1]);
  }
  if (size < 2) {
    if (rank == 0)
      fprintf(stderr, "bench_mpi_pingpong: run with mpirun -np 2\n");
    MPI_Finalize();
    return 2;
  }
  static const long sizes[] = {8, 1024, 8192, 65536, 524288, 4194304};
  const int ns = (int)(sizeof sizes / sizeof *sizes);
  char *buf = calloc(1, (size_t)sizes[ns - 1]);
  double t_us[16], x[16];
  if (rank == 0)
    printf("ranks 0 <-> 1, median of %d runs\n%10s %12s %12s\n", runs, "bytes",
           "one_way_us", "MB/s");
  for (int k = 0; k < ns; k++) {
    int reps = sizes[k] >= 524288 ? 20 : 200;
    double med[64];
    for (int r = 0; r < runs && r < 64; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < reps && rank < 2; i++) {
        if (rank == 0) {
          MPI_Send(buf, (int)sizes[k], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)sizes[k], MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, (int)sizes[k], MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)sizes[k], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      med[r] = (MPI_Wtime() - t0) * 1e6 / (2.0 * reps);
    }
    qsort(med, (size_t)runs, sizeof *med, cmp_d);
    t_us[k] = med[runs / 2];
    x[k] = (double)sizes[k];
    if (rank == 0)
      printf("%10ld %12.2f %12.1f\n", sizes[k], t_us[k],
             (double)sizes[k] / t_us[k]);
  }
  /* least squares t = L + x / B */
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int k = 0; k < ns; k++) {
    sx += x[k];
    sy += t_us[k];
    sxx += x[k] * x[k];
    sxy += x[k] * t_us[k];
  }
  double slope = (ns * sxy - sx * sy) / (ns * sxx - sx * sx);
  double lat = t_us[0] > 0 ? t_us[0] : (sy - slope * sx) / ns;
  double bw = slope > 0 ? 1e6 / slope : 0; /* bytes per second */
  if (rank == 0) {
    printf("fit: latency %.2f us, bandwidth %.1f MB/s\n", lat, bw * 1e-6);
    if (json) {
      FILE *f = fopen(json, "w");
      if (f) {
        fprintf(f, "{\"latency_us\": %.3f, \"bandwidth_bps\": %.0f}\n", lat,
                bw);
        fclose(f);
      }
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
