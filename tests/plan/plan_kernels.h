/* Kernels of the plan tests (plan_kernels.inc). */
#ifndef RP_TEST_PLAN_KERNELS_H
#define RP_TEST_PLAN_KERNELS_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (in a, inout b, scalar oa, scalar ob): b[ob+x] = 3 b[ob+x] + a[oa+x] + 1 */
extern const rp_kernel pk_mix;
/* (in a, out b, scalar oa, scalar ob): b[ob+x] = 7 a[oa+x] + x */
extern const rp_kernel pk_set;
/* (inout a, scalar o): a[o+x] = 5 a[o+x] + 7 */
extern const rp_kernel pk_bump;
/* (inout a: a box of a 2-d byte buffer): a[row][col] += 3 row + col, read
 * through RP_REGION_PTR / RP_BOX_* */
extern const rp_kernel pk_box;
/* (inout v: one double): v *= 0.5 */
extern const rp_kernel pk_half;

#ifdef __cplusplus
}
#endif
#endif
