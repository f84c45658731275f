/* Jacobi 2D converging to a tolerance: rp_exec_run_until() replays until
 * the residual the graph computes falls below it (on cuda: one conditional
 * WHILE node, no host round trip per replay). Checked against a plain C
 * run for the same number of replays; timed against replays checked by
 * the host one by one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"
#include "reprise/backend.h"

int main(int argc, char **argv) {
  ex_converge p = {64, 4, 0};
  ex_opts o;
  unsigned tol_exp = 6, max = 20000, every = 1, internal = 0;
  memset(&o, 0, sizeof o);
  const ex_flag flags[] = {
      {"--n", "N", "grid side (default 64)", &p.n, 1, 3, 1u << 15},
      {"--blocks", "B", "row blocks per step (4)", &p.blocks, 0, 1, 1024},
      {"--tol", "E", "stop once the residual is below 1e-E (6)", &tol_exp, 0, 0,
       300},
      {"--max", "M", "at most M replays (20000)", &max, 0, 1, 1u << 30},
      {"--check-every", "K", "host checks: every K replays (1)", &every, 0, 1,
       1u << 20},
      {"--internal", NULL,
       "the grid stays on the device (only the "
       "residual comes home; the grid is not compared)",
       &internal, 0, 0, 1}};
  int pr =
      ex_parse(argc, argv, "converge", flags, sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  if (p.blocks > p.n)
    p.blocks = (unsigned)p.n;
  double tol = pow(10.0, -(double)tol_exp);
  uint64_t nn = p.n * p.n;
  double *u = calloc(nn, 8), *cu = calloc(nn, 8), *cv = calloc(nn, 8);
  double res = 0, cres = 0;
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  const rp_backend *be = NULL;
  rp_buf rb = 0;
  int ret = 2;
  rp_status rc;
  if (!u || !cu || !cv || rp_graph_create(&g, 0))
    goto out;
  if ((rc = ex_converge_record(g, &p, internal ? NULL : u, &res, &rb)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "converge: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  if ((rc = rp_backend_find(o.backend, &be)) ||
      (rc = rp_exec_create(&x, g, be, NULL))) {
    fprintf(stderr, "converge: backend: %s: %s\n", rp_strerror(rc),
            rp_last_error());
    goto out;
  }
  printf("converge: %llu x %llu grid, %u row blocks, tolerance 1e-%u, at "
         "most %u replays, backend %s\n",
         (unsigned long long)p.n, (unsigned long long)p.n, p.blocks, tol_exp,
         max, rp_backend_name(be));
  rp_until un = {rb, 0, RP_UNTIL_F64, RP_UNTIL_LT, tol};
  unsigned done = 0;
  ex_converge_init(&p, u, &res);
  if ((rc = rp_exec_run_until(x, &un, max, every, &done))) {
    fprintf(stderr, "converge: run_until: %s: %s\n", rp_strerror(rc),
            rp_exec_error(x));
    goto out;
  }
  double t_until = rp_exec_last_us(x);
  char how[96];
  snprintf(how, sizeof how, "tested every %u replay(s)", every);
  printf("run_until: %u replays, residual %.3e (%s)\n", done, res,
         rp_exec_notice(x)[0] ? rp_exec_notice(x) : how);
  ex_converge_init(&p, cu, &cres);
  unsigned want = ex_converge_check(&p, tol, max, cu, cv, &cres);
  if (every > 1) { /* tested every `every` replays: the next multiple */
    want = (want + every - 1) / every * every;
    want = want < max ? want : max;
    ex_converge_init(&p, cu, &cres);
    ex_converge_check(&p, -1.0, want, cu, cv, &cres);
  }
  int same =
      want == done && cres == res && (internal || !memcmp(u, cu, nn * 8));
  printf("plain C check: %u replays, residual %.3e: %s\n", want, cres,
         same ? "identical" : "DIFFERENT");
  if (!same) {
    ret = 1;
    goto out;
  }
  /* The same replays, each checked by the host, on a fresh exec (an
   * internal grid keeps its device state across replays). */
  rp_exec_destroy(x);
  x = NULL;
  if ((rc = rp_exec_create(&x, g, be, NULL)))
    goto out;
  ex_converge_init(&p, u, &res);
  double t0 = rp_clock_us();
  unsigned k = 0;
  while (k < max) {
    if ((rc = rp_exec_run(x, 1)))
      goto out;
    k++;
    if (k % every == 0 && res < tol)
      break;
  }
  double t_host = rp_clock_us() - t0;
  same = k == done && res == cres && (internal || !memcmp(u, cu, nn * 8));
  printf("host-checked replays: %u, results %s\n", k,
         same ? "identical" : "DIFFERENT");
  printf("time per replay: run_until %.2f us, host-checked %.2f us "
         "(ratio %.2f)\n",
         t_until / done, t_host / k, t_host / t_until);
  ret = same ? 0 : 1;
out:
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(u);
  free(cu);
  free(cv);
  return ret;
}
