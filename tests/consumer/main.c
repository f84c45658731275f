/* A program outside the project: built against an installed reprise with
 * find_package or pkg-config. Records y = 2x + y twice, replays it on the
 * backend named by argv[1] (default "openmp") and checks every element. */
#include <reprise.h>
#include <stdio.h>
#include <string.h>

RP_KERNEL(axpy, {
  const double *x = RP_PTR(const double, 0);
  double *y = RP_PTR(double, 1);
  y[RP_X] += RP_VAL(double, 2) * x[RP_X];
})
static const rp_param axpy_params[] = {
    {"x", RP_IN}, {"y", RP_INOUT}, {"a", RP_SCALAR}};
static const rp_kernel axpy_k = RP_KERNEL_DESC(axpy, axpy_params);

int main(int argc, char **argv) {
  enum { N = 1000 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = i;
    y[i] = 1.0;
  }
  rp_graph *g;
  rp_buf bx, by;
  if (rp_graph_create(&g, 0) != RP_OK ||
      rp_buffer_register(g, "x", x, sizeof x, &bx) != RP_OK ||
      rp_buffer_register(g, "y", y, sizeof y, &by) != RP_OK)
    return 1;
  for (int k = 0; k < 2; k++) {
    rp_arg a[3] = {rp_arg_buf(rp_whole(bx)), rp_arg_buf(rp_whole(by)),
                   rp_arg_f64(2.0)};
    if (rp_record_kernel(g, &axpy_k, 0, rp_dims3(N, 1, 1), a, NULL, NULL))
      return 2;
  }
  rp_record_sync_host(g, rp_whole(by), NULL);
  if (rp_graph_end(g) != RP_OK)
    return 3;
  const char *name = argc > 1 ? argv[1] : "openmp";
  const rp_backend *be = NULL;
  rp_exec *ex;
  if ((strcmp(name, "auto") && rp_backend_find(name, &be) != RP_OK) ||
      rp_exec_create(&ex, g, be, NULL) != RP_OK) {
    fprintf(stderr, "consumer: %s\n", rp_last_error());
    return 4;
  }
  be = rp_exec_backend(ex);
  rp_status s = rp_exec_run(ex, 3); /* 3 replays: y = 1 + 12 x */
  rp_exec_destroy(ex);
  rp_graph_destroy(g);
  if (s != RP_OK)
    return 5;
  for (int i = 0; i < N; i++)
    if (y[i] != 1.0 + 12.0 * i) {
      fprintf(stderr, "consumer: y[%d] = %g, expected %g\n", i, y[i],
              1.0 + 12.0 * i);
      return 6;
    }
  printf("consumer: reprise %s, backend %s: ok\n", rp_version(),
         rp_backend_name(be));
  return 0;
}
