/* rp_kernel.halo (issue 35), appended at the end of rp_kernel under the
 * size rule: RP_KERNEL_DESC_HALO() fills it, RP_KERNEL_DESC() leaves it
 * 0, and a descriptor of the size before it (garbage past that size) is
 * recorded with halo 0: no cut. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>
#include "reprise.h"
#include "reprise/kernel.h"

RP_KERNEL(kh_touch, { RP_PTR(double, 0)[RP_X] += 1; })
static const rp_param kh_params[] = {{"a", RP_INOUT}};
static const rp_kernel kh_plain = RP_KERNEL_DESC(kh_touch, kh_params);
static const rp_kernel kh_halo =
    RP_KERNEL_DESC_HALO(kh_touch, kh_params, 0, 2, 0);

/* The halo the recorded node's descriptor has. */
static void recorded_halo(const rp_kernel *k, unsigned out[3]) {
  static double a[4];
  rp_graph *g;
  rp_buf A;
  rp_node n;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "a", a, sizeof a, &A), RP_OK);
  rp_arg arg = rp_arg_buf(rp_whole(A));
  cr_assert_eq(rp_record_kernel(g, k, 0, rp_dims3(4, 1, 1), &arg, NULL, &n),
               RP_OK, "%s", rp_graph_error(g));
  rp_node_info ni;
  cr_assert_eq(rp_node_info_get(g, n, &ni), RP_OK);
  memcpy(out, ni.kernel->halo, 3 * sizeof *out);
  rp_graph_destroy(g);
}

Test(kernel_halo, macros_fill_it) {
  cr_assert_eq(kh_plain.halo[0] + kh_plain.halo[1] + kh_plain.halo[2], 0);
  cr_assert_eq(kh_halo.halo[0], 0);
  cr_assert_eq(kh_halo.halo[1], 2);
  cr_assert_eq(kh_halo.halo[2], 0);
  unsigned h[3];
  recorded_halo(&kh_halo, h);
  cr_assert(h[0] == 0 && h[1] == 2 && h[2] == 0);
}

Test(kernel_halo, older_size_gets_no_halo) {
  /* the layout before halo, then garbage */
  static unsigned char raw[sizeof(rp_kernel) + 16];
  memset(raw, 0xA5, sizeof raw);
  rp_kernel k = kh_halo;
  k.size = offsetof(rp_kernel, halo);
  memcpy(raw, &k, k.size);
  unsigned h[3];
  recorded_halo((const rp_kernel *)(void *)raw, h);
  cr_assert(h[0] == 0 && h[1] == 0 && h[2] == 0, "halo %u %u %u", h[0], h[1],
            h[2]);
}
