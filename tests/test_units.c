/* One rule for region units (issue 27, item 5): a constructor's name says
 * its unit. rp_range_bytes counts bytes, rp_range_elems and the boxes
 * elements of the buffer's element size; the older names are the same
 * regions. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

static double grid[8 * 16]; /* 8 rows of 16 doubles */

static uint64_t runs(rp_graph *g, rp_region r, uint64_t *iv) {
  return rp_region_intervals(g, &r, iv, 16);
}

Test(units, names_say_the_unit) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "G", grid, 8, 16, sizeof(double), &b));
  uint64_t x[32], y[32];
  /* Elements 20 .. 35: bytes 160 .. 288. */
  cr_assert_eq(runs(g, rp_range_elems(b, 20, 16), x), 1);
  cr_assert_eq(x[0], 160);
  cr_assert_eq(x[1], 128);
  cr_assert_eq(runs(g, rp_range_bytes(b, 160, 128), y), 1);
  cr_assert_eq(memcmp(x, y, 2 * sizeof *x), 0);
  /* Rows 1 .. 3, columns 2 .. 6: elements, one run per row. */
  cr_assert_eq(runs(g, rp_box2_elems(b, 1, 3, 2, 6), x), 2);
  cr_assert_eq(x[0], (16 + 2) * 8);
  cr_assert_eq(x[1], 4 * 8);
  const uint64_t lo[2] = {1, 2}, hi[2] = {3, 6};
  cr_assert_eq(runs(g, rp_box_elems(b, 2, lo, hi), y), 2);
  cr_assert_eq(memcmp(x, y, 4 * sizeof *x), 0);
  /* The deprecated names are the same regions. */
  cr_assert_eq(runs(g, rp_box2(b, 1, 3, 2, 6), y), 2);
  cr_assert_eq(memcmp(x, y, 4 * sizeof *x), 0);
  cr_assert_eq(runs(g, rp_bytes(b, 160, 128), y), 1);
  cr_assert_eq(y[0], 160);
  /* Recorded, an element range is stored as its byte range. */
  rp_access acc = {rp_range_elems(b, 20, 16), RP_INOUT};
  rp_node n;
  TU_OK(g,
        rp_record_copy_to_device(g, rp_range_elems(b, 0, 128), 0, NULL, NULL));
  TU_OK(g, rp_record_host(g, tu_host_bump, NULL, &acc, 1, NULL, &n));
  rp_access_info ai;
  TU_OK(g, rp_node_access(g, n, 0, &ai));
  cr_assert_eq(ai.region.kind, RP_REGION_BYTES);
  cr_assert_eq(ai.region.offset, 160);
  cr_assert_eq(ai.region.bytes, 128);
  /* Past the end, in elements: said in elements. */
  acc.region = rp_range_elems(b, 120, 9);
  cr_assert_eq(rp_record_host(g, tu_host_bump, NULL, &acc, 1, NULL, NULL),
               RP_ERANGE);
  cr_assert(strstr(rp_graph_error(g), "element range ends past buffer \"G\" "
                                      "(128 elements of 8 bytes)"),
            "%s", rp_graph_error(g));
  rp_graph_destroy(g);
}
