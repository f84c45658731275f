/* Helpers of the cuda backend's logic tests on the fake runtime
 * (cuda_logic.c defines them; cuda_pack_logic.c uses them too). */
#ifndef RP_TEST_CUDA_LOGIC_H
#define RP_TEST_CUDA_LOGIC_H

#include "reprise.h"

/* An exec of g on the cuda backend with options o (NULL: defaults);
 * asserts it was made. */
rp_exec *cl_mk(const rp_graph *g, rp_exec_opts *o);
/* One replay of x; asserts it ran. */
void cl_run_ok(rp_exec *x);
/* Destroys x and g; expects nothing of the fake runtime's left alive. */
void cl_done(rp_exec *x, rp_graph *g);

#endif
