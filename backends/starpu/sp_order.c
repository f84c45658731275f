/* The order between one rank's tasks in a distributed lowering (the
 * starpu backend's mode "mpi", sp_deps.c; the mpi backend), computed once
 * at instantiate from the bytes each task touches in each memory of the
 * rank: an image, or the user's array that several images may share
 * (rp__sp_alias). Two tasks whose spans of one memory overlap, with a
 * write among them, are ordered in program order; nothing else orders
 * them (no handle per image, whose accesses StarPU would all order: that
 * made a chain through the ranks, sp_deps.c).
 *
 * Program order of two replays is simulated: a task of the second that
 * depends on one of the first gives a dependency on the previous replay;
 * the first's give those within a replay (the same in every replay: the
 * state a replay starts from differs only by the entries of the replay
 * before, which give the dependencies on it). */
#include <stdlib.h>
#include <string.h>
#include "sp_place.h"

/* A live access to one memory: an item of replay A (item < nitem) or B. */
typedef struct acc_ent {
  uint32_t item, mem;
  uint64_t lo, hi;
  int w;
} acc_ent;

typedef struct dep_state {
  acc_ent *ent; /* live entries, all memories */
  size_t nent, cap;
  uint32_t *dep; /* the result: per item, [dep0, dep0 + ndep) */
  size_t ndep, capdep;
  uint32_t *seen; /* per item of both replays: last item that took it */
  int whole;      /* every access spans its whole memory */
} dep_state;

int rp__sp_room(void *ap, size_t n, size_t *cap, size_t elem) {
  if (n < *cap)
    return 0;
  size_t c = *cap ? 2 * *cap : 64;
  void *a, *p;
  memcpy(&a, ap, sizeof a);
  if (!(p = realloc(a, c * elem)))
    return -1;
  memcpy(ap, &p, sizeof p);
  *cap = c;
  return 0;
}

static int push_dep(dep_state *d, uint32_t v) {
  if (rp__sp_room(&d->dep, d->ndep, &d->capdep, sizeof *d->dep))
    return -1;
  d->dep[d->ndep++] = v;
  return 0;
}

/* One access of item `self` (0 .. 2 nitem): its dependencies on the live
 * entries it conflicts with (into d->dep when `record`), then it becomes
 * live; a write retires the entries it covers. */
static int access_one(dep_state *d, uint32_t self, uint32_t nitem, uint32_t mem,
                      uint64_t lo, uint64_t hi, int w, int record) {
  if (hi <= lo)
    return 0;
  if (d->whole) { /* one handle per memory, as StarPU orders them */
    lo = 0;
    hi = UINT64_MAX;
  }
  size_t keep = 0;
  for (size_t k = 0; k < d->nent; k++) {
    acc_ent *e = &d->ent[k];
    int overlap = e->mem == mem && e->lo < hi && lo < e->hi;
    if (overlap && (w || e->w) && e->item != self &&
        d->seen[e->item] != self + 1) {
      d->seen[e->item] = self + 1;
      /* replay B depends on A: the previous replay (flagged); within a
       * replay: the item itself */
      uint32_t v = self >= nitem && e->item < nitem ? e->item | SP_DEP_PREV
                                                    : e->item % nitem;
      if (record && push_dep(d, v))
        return -1;
    }
    if (overlap && w && lo <= e->lo && e->hi <= hi)
      continue; /* covered by this write: reached through it */
    d->ent[keep++] = *e;
  }
  d->nent = keep;
  if (rp__sp_room(&d->ent, d->nent, &d->cap, sizeof *d->ent))
    return -1;
  d->ent[d->nent++] = (acc_ent){self, mem, lo, hi, w};
  return 0;
}

/* The span of bytes a piece's runs cover. */
static void piece_span(const sp_part *pt, uint32_t pc, uint64_t *lo,
                       uint64_t *hi) {
  const sp_piece *p = &pt->piece[pc];
  const uint64_t *r = pt->runs + 2 * (uint64_t)p->r0;
  *lo = UINT64_MAX;
  *hi = 0;
  for (uint32_t k = 0; k < p->nr; k++) {
    if (r[2 * k] < *lo)
      *lo = r[2 * k];
    if (r[2 * k] + r[2 * k + 1] > *hi)
      *hi = r[2 * k] + r[2 * k + 1];
  }
}

/* The memory of image i here: its buffer's user array (ids below nbuf)
 * or an allocation of its own. */
static uint32_t mem_of(const rp_plan *p, const sp_part *pt, uint32_t i) {
  uint32_t nbuf = p->nbuf;
  return rp__sp_in_user(p, pt, i) ? p->image[i].buf : nbuf + i;
}

/* Task x (0 .. 2 n) of the simulated replays: its accesses. */
static int task_accesses(const rp_plan *p, const sp_part *pt,
                         const sp_task_ref *t, dep_state *d, uint32_t x,
                         uint32_t n, int record) {
  const sp_task_ref *it = &t[x % n];
  if (it->touch == SP_T_NONE)
    return 0;
  const rp_plan_node *nd = &p->node[it->v];
  const rp_plan_access *a = p->acc + nd->acc0;
  if (it->touch != SP_T_NODE) {
    uint64_t lo, hi;
    piece_span(pt, it->piece, &lo, &hi);
    if (it->touch != SP_T_WRITE &&
        access_one(d, x, n, mem_of(p, pt, a[0].image), lo, hi, 0, record))
      return -1;
    if (it->touch != SP_T_READ &&
        access_one(d, x, n, mem_of(p, pt, a[1].image), lo, hi, 1, record))
      return -1;
    return 0;
  }
  for (uint32_t j = 0; j < nd->nacc; j++) {
    if (a[j].image == RP_NONE)
      continue;
    /* a copy's destination is written whatever its mode says */
    int w = (a[j].mode & RP_OUT) ||
            (nd->type != RP_OP_KERNEL && nd->type != RP_OP_HOST && j == 1);
    uint64_t lo = it->span ? it->span[2 * j] : a[j].offset;
    uint64_t hi = it->span ? it->span[2 * j + 1] : a[j].offset + a[j].bytes;
    if (access_one(d, x, n, mem_of(p, pt, a[j].image), lo, hi, w, record))
      return -1;
  }
  return 0;
}

rp_status rp__sp_order(const rp_plan *p, const sp_part *pt,
                       const sp_task_ref *t, uint32_t n, int whole, int two,
                       uint32_t **dep, uint32_t *dep0, uint32_t *ndep,
                       uint32_t *maxdep) {
  dep_state d;
  memset(&d, 0, sizeof d);
  d.whole = whole;
  *dep = NULL;
  *maxdep = 0;
  d.seen = calloc(2 * (size_t)n + 1, sizeof *d.seen);
  if (!d.seen)
    return RP_ENOMEM;
  rp_status st = RP_OK;
  /* replay A: the dependencies within a replay */
  for (uint32_t i = 0; i < n && st == RP_OK; i++) {
    dep0[i] = (uint32_t)d.ndep;
    if (task_accesses(p, pt, t, &d, i, n, 1))
      st = RP_ENOMEM;
    ndep[i] = (uint32_t)d.ndep - dep0[i];
    if (!two && ndep[i] > *maxdep)
      *maxdep = ndep[i];
  }
  /* replay B: those on replay A, after each task's own (a task's list
   * is contiguous: A's part is copied before B's is added) */
  uint32_t *within = NULL, nwithin = (uint32_t)d.ndep;
  if (two && st == RP_OK && nwithin &&
      !(within = malloc(nwithin * sizeof *within)))
    st = RP_ENOMEM;
  if (within)
    memcpy(within, d.dep, nwithin * sizeof *within);
  if (two && st == RP_OK)
    d.ndep = 0;
  for (uint32_t i = 0; two && i < n && st == RP_OK; i++) {
    uint32_t w0 = dep0[i], wn = ndep[i];
    dep0[i] = (uint32_t)d.ndep;
    for (uint32_t k = 0; k < wn && st == RP_OK; k++)
      if (push_dep(&d, within[w0 + k]))
        st = RP_ENOMEM;
    size_t before = d.ndep;
    if (st == RP_OK && task_accesses(p, pt, t, &d, n + i, n, 1))
      st = RP_ENOMEM;
    /* keep only those on replay A (within B they repeat A's) */
    size_t keep = before;
    for (size_t k = before; k < d.ndep; k++)
      if (d.dep[k] & SP_DEP_PREV)
        d.dep[keep++] = d.dep[k];
    d.ndep = keep;
    ndep[i] = (uint32_t)d.ndep - dep0[i];
    if (ndep[i] > *maxdep)
      *maxdep = ndep[i];
  }
  free(within);
  free(d.ent);
  free(d.seen);
  if (st != RP_OK) {
    free(d.dep);
    return st;
  }
  *dep = d.dep;
  return RP_OK;
}
