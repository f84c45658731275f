/* Backends as plugins, through the shared library: finding a plugin by
 * name on REPRISE_PLUGIN_PATH, refusing a wrong interface version, a file
 * without entry point, a missing file or vendor library with a clear
 * message; the xrt backend loaded from its plugin and replaying a graph. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"

#define PLUG(name) RP_TEST_PLUGINS "/libreprise-" name ".so"

Test(plugin, found_by_name_on_the_path) {
  const rp_backend *be, *again;
  cr_assert_eq(rp_backend_find("fake", &be), RP_OK, "%s", rp_last_error());
  cr_assert_str_eq(rp_backend_name(be), "fake");
  cr_assert_eq(be->abi, RP_BACKEND_ABI);
  Dl_info info;
  cr_assert(dladdr(be, &info));
  cr_assert(strstr(info.dli_fname, "libreprise-fake.so"), "%s", info.dli_fname);
  cr_assert_eq(rp_backend_find("fake", &again), RP_OK);
  cr_assert_eq(again, be);
  cr_assert_eq(rp_plugin_load(PLUG("fake"), &again), RP_OK);
  cr_assert_eq(again, be);
  int listed = 0;
  for (const rp_backend *const *b = rp_backend_list(); *b; b++)
    listed += *b == be;
  cr_assert_eq(listed, 1);
  cr_assert(strstr(rp_plugin_path(), RP_TEST_PLUGINS));
}

Test(plugin, other_interface_version_refused) {
  const rp_backend *be = (const rp_backend *)1;
  cr_assert_eq(rp_plugin_load(PLUG("badabi"), &be), RP_ENOTSUP);
  cr_assert_null(be);
  cr_assert(strstr(rp_last_error(), "interface 999"), "%s", rp_last_error());
  cr_assert_eq(rp_backend_find("badabi", &be), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "rebuild"), "%s", rp_last_error());
}

Test(plugin, no_entry_point_refused) {
  const rp_backend *be;
  cr_assert_eq(rp_plugin_load(PLUG("noentry"), &be), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), RP_PLUGIN_ENTRY_NAME), "%s",
            rp_last_error());
}

Test(plugin, missing_vendor_library_named) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("vendor", &be), RP_EIO);
  cr_assert_null(be);
  cr_assert(strstr(rp_last_error(), "libnovendor.so"), "%s", rp_last_error());
  cr_assert(strstr(rp_last_error(), "libreprise-vendor.so"), "%s",
            rp_last_error());
}

Test(plugin, misnamed_plugin_refused) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("misnamed", &be), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "\"other\""), "%s", rp_last_error());
}

Test(plugin, bad_paths_and_names) {
  const rp_backend *be;
  cr_assert_eq(rp_plugin_load(NULL, &be), RP_EINVAL);
  cr_assert_eq(rp_plugin_load("/nonexistent/libreprise-x.so", &be), RP_EIO);
  cr_assert(strstr(rp_last_error(), "/nonexistent/libreprise-x.so"));
  cr_assert_eq(rp_backend_find("nosuch", &be), RP_ENOTFOUND);
  cr_assert(strstr(rp_last_error(), "nosuch"));
  cr_assert_eq(rp_backend_find("../fake", &be), RP_ENOTFOUND);
  cr_assert_eq(rp_backend_find("fake", NULL), RP_EINVAL);
#ifndef RP_TEST_CUDA_PLUGIN
  /* a backend this project has, not built here: says where it looked */
  cr_assert_eq(rp_backend_find("cuda", &be), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "libreprise-cuda.so"), "%s",
            rp_last_error());
  cr_assert(strstr(rp_last_error(), RP_TEST_PLUGINS), "%s", rp_last_error());
#endif
}

#ifdef RP_TEST_CUDA_PLUGIN
/* The CUDA plugin loads wherever the CUDA runtime is installed; without a
 * device its probe says so. */
Test(plugin, cuda_from_its_plugin) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("cuda", &be), RP_OK, "%s", rp_last_error());
  Dl_info info;
  cr_assert(dladdr(be, &info));
  cr_assert(strstr(info.dli_fname, "reprise/libreprise-cuda.so"), "%s",
            info.dli_fname);
  rp_status s = rp_backend_probe(be);
  cr_assert(s == RP_OK || s == RP_ENODEV, "%s", rp_status_name(s));
  if (s == RP_ENODEV)
    cr_assert(rp_last_error()[0]);
}
#endif

#ifdef RP_TEST_XRT_PLUGIN
RP_KERNEL(twice, {
  RP_PTR(double, 1)[RP_X] = 2.0 * RP_PTR(const double, 0)[RP_X];
})
static const rp_param twice_params[] = {{"x", RP_IN}, {"y", RP_OUT}};
static const rp_kernel twice_k = RP_KERNEL_DESC(twice, twice_params);

/* The build tree's xrt plugin (<build>/reprise) found beside the library,
 * replaying in XRT's noop emulation like the reference. */
Test(plugin, xrt_from_its_plugin) {
  setenv("RP_XRT_EMULATE", "1", 1);
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK, "%s", rp_last_error());
  Dl_info info;
  cr_assert(dladdr(be, &info));
  cr_assert(strstr(info.dli_fname, "reprise/libreprise-xrt.so"), "%s",
            info.dli_fname);
  enum { N = 256 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++)
    x[i] = i * 0.5;
  rp_graph *g;
  rp_buf bx, by;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "x", x, sizeof x, &bx), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "y", y, sizeof y, &by), RP_OK);
  rp_arg a[2] = {rp_arg_buf(rp_whole(bx)), rp_arg_buf(rp_whole(by))};
  cr_assert_eq(
      rp_record_kernel(g, &twice_k, 0, rp_dims3(N, 1, 1), a, NULL, NULL),
      RP_OK);
  cr_assert_eq(rp_record_sync_host(g, rp_whole(by), NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_exec *ex;
  cr_assert_eq(rp_exec_create(&ex, g, be, NULL), RP_OK, "%s", rp_last_error());
  cr_assert_eq(rp_exec_run(ex, 2), RP_OK, "%s", rp_exec_error(ex));
  for (int i = 0; i < N; i++)
    cr_assert_eq(y[i], 2.0 * x[i], "y[%d] = %g", i, y[i]);
  rp_exec_destroy(ex);
  rp_graph_destroy(g);
}
#endif
