/* The cuda backend's copies of boxes on the fake runtime: the backend
 * reads a copy's region from the plan (its byte runs), not from the
 * recorded graph, and must move exactly the box's bytes: a box with gaps
 * as one 3-d copy, a run without gaps as one contiguous copy. Each case
 * copies one box to device 0 (whose image starts zeroed) and the whole
 * buffer back, so the host array ends with the box's bytes and zeros
 * around it: byte-identical to the reference replay. */
#include <criterion/criterion.h>
#include <string.h>
#include "fake_cudart.h"
#include "reprise/backend.h"
#include "util.h"
#include "cuda_logic.h"

static void setup(void) {
  fk_devices(1);
  fk_reset();
}

TestSuite(cuda_box_logic, .init = setup);

enum { D0 = 3, D1 = 5, D2 = 7, EL = 4, BYTES = D0 * D1 * D2 * EL };

/* Buffer of dims nd (D0 x D1 x D2, or D1 x D2 for 2-d) filled with a
 * pattern, box [lo, hi) in, the whole buffer out, once on backend be;
 * the host array after it in out. */
static void run_box(const rp_backend *be, unsigned nd, const uint64_t *lo,
                    const uint64_t *hi, uint8_t *out) {
  uint8_t host[BYTES];
  for (unsigned i = 0; i < BYTES; i++)
    host[i] = (uint8_t)(i * 13 + 1);
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buffer_desc d = {"box", host, 0, EL, nd, {0, 0, 0}};
  uint64_t dims[3] = {D0, D1, D2};
  d.bytes = EL;
  for (unsigned k = 0; k < nd; k++) {
    d.dims[k] = dims[3 - nd + k];
    d.bytes *= d.dims[k];
  }
  TU_OK(g, rp_buffer_add(g, &d, &b));
  TU_OK(g, rp_record_copy_to_device(g, rp_box_elems(b, nd, lo, hi), 0, NULL,
                                    NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(b), 0, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, be, NULL);
  cr_assert_eq(s, RP_OK, "%s: %s", be->name, rp_last_error());
  s = rp_exec_run(x, 1);
  cr_assert_eq(s, RP_OK, "%s: %s", be->name, rp_exec_error(x));
  memcpy(out, host, d.bytes);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* Box [lo, hi) of an nd-d buffer on the cuda backend equals the
 * reference; the fake runtime saw `copies3d` 3-d copies. */
static void check_box(unsigned nd, const uint64_t *lo, const uint64_t *hi,
                      unsigned copies3d) {
  extern const rp_backend rp_backend_cuda;
  const rp_backend *ref;
  TU_OK(NULL, rp_backend_find("reference", &ref));
  uint8_t want[BYTES], got[BYTES];
  memset(want, 0xee, sizeof want);
  memset(got, 0xdd, sizeof got);
  run_box(ref, nd, lo, hi, want);
  fk_reset();
  run_box(&rp_backend_cuda, nd, lo, hi, got);
  uint64_t n = (uint64_t)EL * (nd == 3 ? D0 : 1) * D1 * D2;
  unsigned nonzero = 0;
  for (uint64_t i = 0; i < n; i++) {
    cr_assert_eq(got[i], want[i], "byte %llu: %u, the reference %u",
                 (unsigned long long)i, got[i], want[i]);
    nonzero += want[i] != 0;
  }
  cr_assert_gt(nonzero, 0);
  cr_assert_lt(nonzero, n, "the box is the whole buffer");
  cr_assert_eq(fk.add_copy3d, copies3d, "%u 3-d copies", fk.add_copy3d);
}

Test(cuda_box_logic, a_2d_box_with_gaps) {
  uint64_t lo[2] = {1, 2}, hi[2] = {4, 6};
  check_box(2, lo, hi, 1);
}

Test(cuda_box_logic, a_3d_box_with_gaps_in_every_dimension) {
  uint64_t lo[3] = {1, 1, 2}, hi[3] = {3, 4, 5};
  check_box(3, lo, hi, 1);
}

Test(cuda_box_logic, a_3d_box_of_whole_rows_in_part_of_each_plane) {
  uint64_t lo[3] = {0, 1, 0}, hi[3] = {3, 3, D2};
  check_box(3, lo, hi, 1);
}

Test(cuda_box_logic, whole_planes_and_one_part_of_a_row_are_contiguous) {
  uint64_t lo[3] = {1, 0, 0}, hi[3] = {2, D1, D2};
  check_box(3, lo, hi, 0);
  uint64_t lo2[2] = {2, 1}, hi2[2] = {3, 6};
  check_box(2, lo2, hi2, 0);
}
