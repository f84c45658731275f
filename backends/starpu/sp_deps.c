/* Mode "mpi": the order between one rank's tasks, computed once at
 * instantiate from the bytes each task touches (sp_item deps).
 *
 * StarPU's implicit data dependencies order every access to one handle,
 * and an image is one handle: a halo row unpacked into a device's image
 * (a write of its rows r0 - 1 or r1) then orders the packs of the rows
 * that device sends on (r0 and r1 - 1), submitted later in program order,
 * after it. Rank k's send to rank k + 1 then waits for rank k - 1's
 * message, which waited for rank k - 2's: a chain through the ranks that
 * the program does not have (a step needs its neighbours' previous rows
 * only), which made rank k's replay wait k hops of (message, stencil)
 * within every step. Here tasks are ordered by explicit dependencies
 * instead, between tasks whose byte spans of one memory overlap with a
 * write among them (the memory: an image of this rank, or the user's
 * array, which several images may share, rp__sp_alias); a staging buffer
 * keeps StarPU's data dependencies (pack -> send, receive -> unpack, and
 * across replays the next pack or receive after the previous send or
 * unpack).
 *
 * The order itself: rp__sp_order (sp_order.c), shared with the mpi
 * backend. */
#include <stdlib.h>
#include "sp_internal.h"

rp_status rp__sp_deps(sp *s) {
  uint32_t n = s->nitem;
  sp_task_ref *t = calloc((size_t)n + 1, sizeof *t);
  uint32_t *d0 = malloc(((size_t)n + 1) * sizeof *d0);
  uint32_t *dn = malloc(((size_t)n + 1) * sizeof *dn);
  rp_status st = RP_ENOMEM;
  if (t && d0 && dn) {
    for (uint32_t i = 0; i < n; i++) {
      const sp_item *it = &s->item[i];
      uint8_t touch = it->kind == SP_SEND || it->kind == SP_RECV ? SP_T_NONE
                      : it->piece == RP_NONE                     ? SP_T_NODE
                      : it->kind == SP_PACK                      ? SP_T_READ
                      : it->kind == SP_UNPACK                    ? SP_T_WRITE
                                                                 : SP_T_BOTH;
      t[i] = (sp_task_ref){it->v, it->piece, touch, NULL};
    }
    st = rp__sp_order(s->p, &s->part, t, n, s->dep_whole, 1, &s->dep, d0, dn,
                      &s->maxdep);
  }
  s->ndep = 0;
  for (uint32_t i = 0; st == RP_OK && i < n; i++) {
    s->item[i].dep0 = d0[i];
    s->item[i].ndep = dn[i];
    s->ndep += dn[i];
  }
  free(t);
  free(d0);
  free(dn);
  return st;
}
