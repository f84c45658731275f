/* Runs a GPU test program only where a CUDA device is usable; otherwise
 * says why and exits 77, which ctest reports as Skipped (SKIP_RETURN_CODE).
 * usage: gpu_gate PROGRAM [ARGS...] */
#include <stdio.h>
#include <unistd.h>
#include "reprise.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gpu_gate PROGRAM [ARGS...]\n");
    return 2;
  }
  const rp_backend *be;
  rp_status s = rp_backend_find("cuda", &be);
  if (s == RP_OK)
    s = rp_backend_probe(be);
  if (s != RP_OK) {
    printf("skipped: no usable CUDA device (%s: %s)\n", rp_strerror(s),
           rp_last_error());
    return 77;
  }
  execv(argv[1], argv + 1);
  perror(argv[1]);
  return 1;
}
