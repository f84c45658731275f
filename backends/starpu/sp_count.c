/* The starpu lowering's figures of one rank's part (rp__starpu_stats),
 * for an exec and for a fake rank (rp__starpu_count: no StarPU, no MPI). */
#include <stdlib.h>
#include <string.h>
#include "sp_internal.h"

/* One handle per image in memory of its own, user array, staging buffer. */
static uint32_t part_handles(const rp_plan *p, const sp_part *pt) {
  uint32_t own = 0; /* images in memory of their own */
  for (uint32_t k = 0; k < pt->nimage; k++)
    own += !rp__sp_in_user(p, pt, pt->image[k]);
  return own + pt->nuser + pt->nstage;
}

void rp__sp_part_stats(const rp_plan *p, const sp_part *pt, int rank,
                       int nranks, rp__starpu_stats *out) {
  memset(out, 0, sizeof *out);
  out->rank = rank;
  out->nranks = nranks;
  out->nodes = p->nnode;
  out->tasks = pt->tasks;
  out->sends = pt->sends;
  out->recvs = pt->recvs;
  out->scanned = p->nnode;
  out->visited = pt->nnode;
  out->accesses = pt->naccess;
  out->images = pt->nimage;
  out->pieces = pt->npiece;
  out->user_arrays = pt->nuser;
  for (uint32_t k = 0; pt->alias && k < pt->nimage; k++)
    out->aliased += pt->alias[pt->image[k]];
  for (uint32_t k = 0; k < pt->nimage; k++) {
    const rp_plan_image *im = &p->image[pt->image[k]];
    out->image_bytes +=
        rp__sp_in_user(p, pt, pt->image[k]) ? 0 : im->hi - im->lo;
  }
  out->part_handles = part_handles(p, pt);
}

rp_status rp__starpu_count(const rp_plan *p, int rank, int nranks,
                           rp__starpu_stats *out) {
  sp_part pt;
  sp_place pl;
  char err[256];
  double t0 = rp_clock_us();
  rp_status st = rp__sp_place(p, nranks, &pl);
  if (st == RP_OK)
    st = rp__sp_part(p, SP_MPI, rank, &pl, &pt, err, sizeof err);
  if (st == RP_OK && (st = rp__sp_alias(p, SP_MPI, rank, &pl, &pt)) != RP_OK)
    rp__sp_part_free(&pt);
  double t1 = rp_clock_us();
  rp__sp_place_free(&pl);
  if (st != RP_OK)
    return st;
  rp__sp_part_stats(p, &pt, rank, nranks, out);
  out->lower_us = t1 - t0;
  out->handles = out->part_handles;
  rp__sp_part_free(&pt);
  return RP_OK;
}
