/* Blocked matmul on an FPGA through the xrt backend: C += A * B in 32 x 32
 * tiles, verified in the same graph by a kernel on a CPU-kind device (1)
 * that recomputes C from its value at the replay's start, and checked
 * against the reference replay and a plain triple loop;
 * prints the compute units, the theoretical and the achieved speedup.
 * Without --xclbin it runs XRT's noop shim in emulation mode. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "examples.h"

#define CHECK(expr, x)                                                         \
  do {                                                                         \
    rp_status s_ = (expr);                                                     \
    if (s_ != RP_OK) {                                                         \
      fprintf(stderr, "%s: %s\n  %s\n", #expr, rp_status_name(s_),             \
              (x) ? rp_exec_error(x) : rp_last_error());                       \
      return 2;                                                                \
    }                                                                          \
  } while (0)

static void usage(void) {
  fprintf(stderr,
          "usage: matmul_fpga [-n N] [--iters K] [--cus C] [--delay-us D]\n"
          "                   [--xclbin FILE]\n"
          "  -n N        matrix size, a multiple of 32 (default 256)\n"
          "  --iters K   replays (default 2)\n"
          "  --cus C     compute units of \"matmul\" (emulation: generated; "
          "card: for the bound)\n"
          "  --delay-us  emulation: time each noop run takes (default 500)\n"
          "  --xclbin F  run on a card with this xclbin (no emulation)\n");
}

/* The emulation: XRT's noop shim executes nothing, the backend runs each
 * kernel's CPU body when its run completes. An xrt.ini silences XRT and
 * gives every noop run a duration, like a kernel on a card. */
static int setup_emulation(unsigned cus, unsigned delay_us, char *dir) {
  char v[16];
  snprintf(v, sizeof v, "%u", cus);
  setenv("RP_XRT_EMULATE", "1", 1);
  setenv("RP_XRT_EMU_CUS", v, 1);
  if (getenv("XRT_INI_PATH"))
    return 0;
  strcpy(dir, "/tmp/rp_matmul_fpga.XXXXXX");
  if (!mkdtemp(dir))
    return -1;
  char path[64];
  snprintf(path, sizeof path, "%s/xrt.ini", dir);
  FILE *fp = fopen(path, "w");
  if (!fp)
    return -1;
  fprintf(fp,
          "[Runtime]\nruntime_log=null\nverbosity=0\n"
          "noop_completion_delay_us=%u\n",
          delay_us);
  fclose(fp);
  setenv("XRT_INI_PATH", path, 1);
  return 0;
}

int main(int argc, char **argv) {
  ex_matmul p = {256, 0};
  unsigned iters = 2, cus = 2, delay = 500;
  const char *xclbin = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "-n") && v)
      p.n = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && v)
      iters = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cus") && v)
      cus = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--delay-us") && v)
      delay = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--xclbin") && v)
      xclbin = argv[++i];
    else {
      usage();
      return 2;
    }
  }
  if (!p.n || p.n % EX_MM_BS || !iters || !cus) {
    usage();
    return 2;
  }
  char dir[64] = "";
  if (!xclbin && setup_emulation(cus, delay, dir)) {
    perror("matmul_fpga: xrt.ini");
    return 2;
  }
  int emulate =
      getenv("RP_XRT_EMULATE") && strcmp(getenv("RP_XRT_EMULATE"), "0");
  size_t nel = (size_t)p.n * p.n;
  float *a = malloc(nel * sizeof *a), *b = malloc(nel * sizeof *b);
  float *c = malloc(nel * sizeof *c), *want = malloc(nel * sizeof *c);
  float *ref = malloc(nel * sizeof *c);
  uint32_t *bad = calloc(p.n, sizeof *bad);
  rp_graph *g = NULL;
  rp_exec *x = NULL, *xs = NULL;
  const rp_backend *be;
  if (!a || !b || !c || !want || !ref || !bad)
    return 2;
  CHECK(rp_graph_create(&g, 0), NULL);
  CHECK(ex_matmul_record_verified(g, &p, 1, a, b, c, bad), NULL);
  CHECK(rp_graph_end(g), NULL);
  CHECK(rp_backend_find("xrt", &be), NULL);
  unsigned nb = p.n / EX_MM_BS;
  printf("matmul_fpga: %ux%u floats, %ux%u tiles of %d, %u kernels, "
         "%u ops\n",
         p.n, p.n, nb, nb, EX_MM_BS, nb * nb * nb, rp_graph_num_nodes(g));
  printf("backend xrt, mode %s, kernel \"matmul\" on %u compute units\n",
         emulate ? "noop-emulation (XRT noop shim; each kernel's CPU body "
                   "runs on the host when its run completes)"
                 : "hardware",
         cus);

  /* Reference and triple loop from the same data. */
  ex_matmul_init(&p, a, b, c);
  memcpy(want, c, nel * sizeof *c);
  ex_matmul_check(&p, iters, a, b, want);
  CHECK(rp_replay_reference(g, iters), NULL);
  memcpy(ref, c, nel * sizeof *c);

  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.xclbin = xclbin;
  CHECK(rp_exec_create(&x, g, be, &o), NULL);
  o.mode = "serial";
  CHECK(rp_exec_create(&xs, g, be, &o), NULL);
  ex_matmul_init(&p, a, b, c);
  CHECK(rp_exec_run(x, iters), x);
  int same_ref = !memcmp(c, ref, nel * sizeof *c);
  int same_loop = !memcmp(c, want, nel * sizeof *c);
  uint64_t nbad = 0;
  for (unsigned r = 0; r < p.n; r++)
    nbad += bad[r];
  printf("check: %s the reference replay, %s the triple loop (%u "
         "replays); in-graph verification on CPU-kind device 1: %llu "
         "elements differ\n",
         same_ref ? "equals" : "DIFFERS FROM",
         same_loop ? "equals" : "DIFFERS FROM", iters,
         (unsigned long long)nbad);

  /* Achieved: serial (one op at a time, program order) vs the DAG. */
  ex_matmul_init(&p, a, b, c);
  CHECK(rp_exec_run(xs, iters), xs);
  double serial_us = rp_exec_last_us(xs);
  ex_matmul_init(&p, a, b, c);
  CHECK(rp_exec_run(x, iters), x);
  double dag_us = rp_exec_last_us(x);

  /* Theoretical: the analysis of measured costs, one lane per compute
   * unit (compute:0.u), kernels taken in turn as the backend does. */
  double *op_us = malloc(rp_graph_num_nodes(g) * sizeof *op_us);
  rp_analysis *an = NULL;
  rp_analysis_opts ao;
  rp_summary sm;
  if (!op_us)
    return 2;
  CHECK(rp_exec_profile(xs, op_us), xs);
  rp_analysis_opts_init(&ao);
  ao.measured_us = op_us;
  ao.compute_units = &cus;
  ao.ncompute_units = 1;
  CHECK(rp_analyze(g, &ao, &an), NULL);
  rp_analysis_summary(an, &sm);
  printf("theoretical: serial %.0f us, critical path %.0f us, max lane "
         "%.0f us over %u compute-unit lanes -> bound %.2fx (limited by %s), "
         "predicted %.2fx\n",
         sm.serial_us, sm.critical_path_us, sm.max_lane_us, cus, sm.bound,
         sm.limited_by, sm.predicted_speedup);
  printf("achieved:    serial replay %.0f us, overlapped replay %.0f us "
         "-> %.2fx (%u replays)\n",
         serial_us, dag_us, dag_us > 0 ? serial_us / dag_us : 0.0, iters);

  rp_analysis_destroy(an);
  rp_exec_destroy(xs);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(op_us);
  free(a);
  free(b);
  free(c);
  free(want);
  free(ref);
  free(bad);
  if (dir[0]) {
    char path[80];
    snprintf(path, sizeof path, "%s/xrt.ini", dir);
    unlink(path);
    rmdir(dir);
  }
  return same_ref && same_loop && nbad == 0 ? 0 : 1;
}
