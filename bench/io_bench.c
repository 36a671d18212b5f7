/* io_bench: IOR-like collective MPI-IO bandwidth and open/close time, an
 * unmodified MPI program (run natively, or across the clusters through
 * zipper-run --transparent; bench/zipper_bench_io.py drives both).
 *
 * usage: io_bench DIR MIB_PER_RANK OPENS [METRICS_HOST:PORT]
 * Each rank writes MIB_PER_RANK MiB as one contiguous block at rank*block
 * with MPI_File_write_at_all (then MPI_File_sync), then reads it back with
 * MPI_File_read_at_all and checks every byte. Times are rank 0's, between
 * barriers. With METRICS_HOST:PORT (zipperd --metrics-listen), rank 0 reads
 * zipper_job_bytes_total / zipper_job_frames_total before and after the
 * write and prints the payload bytes zipperd relayed meanwhile.
 * Output: "io_bench,KEY,VALUE" lines on rank 0 (seconds, bytes, B/s). */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Sum of a Prometheus counter family over all its samples, or -1. */
static double scrape(const char* hostport, const char* family) {
  char host[64];
  int port = 0;
  if (sscanf(hostport, "%63[^:]:%d", host, &port) != 2) return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
      connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  const char req[] = "GET /metrics HTTP/1.0\r\nHost: zipperd\r\n\r\n";
  if (write(fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1)) {
    close(fd);
    return -1;
  }
  size_t cap = 1 << 20, len = 0;
  char* buf = malloc(cap + 1);
  ssize_t n;
  while (len < cap && (n = read(fd, buf + len, cap - len)) > 0) len += (size_t)n;
  close(fd);
  buf[len] = '\0';
  double sum = 0;
  const size_t fl = strlen(family);
  for (char* line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strncmp(line, family, fl) != 0 || (line[fl] != '{' && line[fl] != ' ')) continue;
    const char* v = strrchr(line, ' ');
    if (v != NULL) sum += strtod(v + 1, NULL);
  }
  free(buf);
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: io_bench DIR MIB_PER_RANK OPENS [METRICS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int block = atoi(argv[2]) * (1 << 20), opens = atoi(argv[3]);
  const char* metrics = argc > 4 ? argv[4] : NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/io_bench.dat", argv[1]);
  unsigned char* buf = malloc((size_t)block);
  for (int i = 0; i < block; ++i) buf[i] = (unsigned char)(rank * 31 + i * 7);
  MPI_File fh;
  MPI_Status st;

  /* Open and close, collectively; the first is a warm-up. */
  double t_open = 0;
  for (int k = 0; k <= opens; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS)
      MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_File_close(&fh);
    if (k > 0) t_open += MPI_Wtime() - t0;
  }

  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_Barrier(MPI_COMM_WORLD);
  double m0b = -1, m0f = -1, m0s = -1;
  if (rank == 0 && metrics) {
    usleep(300000); /* the barrier's frames are through */
    m0b = scrape(metrics, "zipper_job_bytes_total");
    m0f = scrape(metrics, "zipper_job_frames_total");
    m0s = scrape(metrics, "zipper_side_received_bytes_total");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_File_write_at_all(fh, (MPI_Offset)rank * block, buf, block, MPI_BYTE, &st);
  MPI_File_sync(fh);
  double t_write = MPI_Wtime() - t0;
  double m1b = -1, m1f = -1, m1s = -1;
  if (rank == 0 && metrics) {
    usleep(1000000); /* the other cluster's writers are done too */
    m1b = scrape(metrics, "zipper_job_bytes_total");
    m1f = scrape(metrics, "zipper_job_frames_total");
    m1s = scrape(metrics, "zipper_side_received_bytes_total");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t_write = MPI_Wtime() - t0;
  if (rank == 0 && metrics) t_write -= 1.0;

  memset(buf, 0, (size_t)block);
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  MPI_File_read_at_all(fh, (MPI_Offset)rank * block, buf, block, MPI_BYTE, &st);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_read = MPI_Wtime() - t0;
  int bad = 0;
  for (int i = 0; i < block; ++i) bad |= buf[i] != (unsigned char)(rank * 31 + i * 7);
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  MPI_File_close(&fh);
  if (rank == 0) {
    MPI_File_delete(path, MPI_INFO_NULL);
    const double total = (double)block * n;
    printf("io_bench,ranks,%d\nio_bench,bytes,%.0f\n", n, total);
    printf("io_bench,open_close_s,%.6f\n", t_open / (opens > 0 ? opens : 1));
    printf("io_bench,write_s,%.6f\nio_bench,write_Bps,%.0f\n", t_write, total / t_write);
    printf("io_bench,read_s,%.6f\nio_bench,read_Bps,%.0f\n", t_read, total / t_read);
    if (metrics)
      printf(
          "io_bench,zipperd_write_payload_bytes,%.0f\nio_bench,zipperd_write_frames,%.0f\n"
          "io_bench,zipperd_write_received_bytes,%.0f\n"
          "io_bench,zipperd_job_payload_bytes_before,%.0f\n",
          m1b - m0b, m1f - m0f, m1s - m0s, m0b);
    printf("io_bench,verified,%s\n", anybad ? "no" : "yes");
  }
  free(buf);
  MPI_Finalize();
  return anybad;
}
