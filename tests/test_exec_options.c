/* Backend options declared per backend (issue 22): every backend names
 * the backend-specific members of rp_exec_opts it reads
 * (rp_backend_options()), and rp_exec_create() refuses any other in one
 * place, with one message, on every backend present. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

static const unsigned bits[] = {
    RP_EXEC_OPT_NTHREADS, RP_EXEC_OPT_CORES,       RP_EXEC_OPT_DEVICE_MAP,
    RP_EXEC_OPT_XCLBIN,   RP_EXEC_OPT_XRT_EMULATE, RP_EXEC_OPT_CUDA_UPDATE};

static void set_one(rp_exec_opts *o, unsigned bit) {
  static const int cores[1] = {0}, map[1] = {0};
  rp_exec_opts_init(o);
  switch (bit) {
  case RP_EXEC_OPT_NTHREADS:
    o->nthreads = 2;
    break;
  case RP_EXEC_OPT_CORES:
    o->cores = cores;
    o->ncores = 1;
    break;
  case RP_EXEC_OPT_DEVICE_MAP:
    o->device_map = map;
    o->ndevice_map = 1;
    break;
  case RP_EXEC_OPT_XCLBIN:
    o->xclbin = "/nonexistent.xclbin";
    break;
  case RP_EXEC_OPT_XRT_EMULATE:
    o->xrt_emulate = 1;
    break;
  default:
    o->cuda_update = "table";
    break;
  }
}

Test(exec_options, undeclared_options_refused_in_one_place) {
  static unsigned char m[8];
  static tu_host_arg arg = {0, 8};
  rp_graph *g = tu_one_host_task(m, sizeof m, 8, tu_host_bump, &arg, NULL);
  unsigned tried = 0;
  for (const rp_backend *const *be = rp_backend_list(); *be; be++) {
    if (rp_backend_probe(*be) != RP_OK)
      continue;
    const char *name = rp_backend_name(*be);
    unsigned takes = rp_backend_options(*be);
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
      if (takes & bits[i])
        continue;
      const char *opt = rp_exec_option_name(bits[i]);
      rp_exec_opts o;
      set_one(&o, bits[i]);
      rp_exec *x = (rp_exec *)1;
      cr_assert_eq(rp_exec_create(&x, g, *be, &o), RP_EINVAL, "%s: %s", name,
                   opt);
      cr_assert_null(x);
      char want[96];
      snprintf(want, sizeof want,
               "%s: option \"%s\" is not supported (%s "
               "takes ",
               name, opt, name);
      cr_assert(strstr(rp_last_error(), want), "%s", rp_last_error());
      tried++;
    }
  }
  cr_assert_gt(tried, 0);
  /* What the CPU backends take, as documented. */
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("reference", &be), RP_OK);
  cr_assert_eq(rp_backend_options(be), 0u);
  if (rp_backend_find("openmp", &be) == RP_OK) {
    cr_assert_eq(rp_backend_options(be), RP_EXEC_OPT_NTHREADS |
                                             RP_EXEC_OPT_CORES |
                                             RP_EXEC_OPT_DEVICE_MAP);
    rp_exec_opts o;
    set_one(&o, RP_EXEC_OPT_NTHREADS);
    rp_exec *x;
    cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_OK, "%s", rp_last_error());
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    cr_assert_eq(m[0], 7);
    rp_exec_destroy(x);
  }
  cr_assert_eq(rp_backend_options(NULL), 0u);
  cr_assert_str_eq(rp_exec_option_name(RP_EXEC_OPT_NTHREADS), "nthreads");
  cr_assert_str_eq(rp_exec_option_name(RP_EXEC_OPT_CUDA_UPDATE), "cuda_update");
  cr_assert_null(rp_exec_option_name(1u << 20));
  rp_graph_destroy(g);
}
