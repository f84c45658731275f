/* State shared by the files of the OpenMP backend (never installed). */
#ifndef RP_OMP_INTERNAL_H
#define RP_OMP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include "record/graph.h"

#define RP_OMP_MAXT 64   /* most threads in a team */
#define RP_OMP_BATCH 256 /* most tasks one claim takes */
/* Kernels with at least this many index points are split over the idle
 * threads of their group; smaller ones run whole. */
#define RP_OMP_SPLIT_MIN 8192

enum { OT_NOP = 0, OT_KERNEL = 1, OT_HOST = 2, OT_COPY = 3 };

/* A copy between two images that do not share memory. */
typedef struct ocopy {
  rp_buf buf;
  int src, dst;        /* space slots: 0 host, 1 + device */
  uint64_t niv;
  uint64_t *iv;        /* (offset, length) pairs */
} ocopy;

/* Everything a worker touches to run one task: one cache line. */
typedef struct otask {
  _Alignas(64) _Atomic int cnt;
  int indeg0;
  uint32_t s0, ns;     /* successors: st->succ[s0 .. s0 + ns) */
  uint8_t kind, split, sdim;
  int8_t group;        /* -1: any group may run it */
  uint32_t node;
  union { rp_cpu_fn k; rp_host_fn h; } fn;
  void *p;             /* kernel: rp_kargs*; host: ptrs; copy: ocopy* */
  void *user;          /* host tasks */
} otask;

typedef struct padl {
  _Alignas(64) _Atomic long v;
} padl;

/* One published data-parallel kernel: idle threads claim its chunks. The
 * claim counter and the chunk count carry the use's generation, so a claim
 * made through a stale pointer to a reused job is recognised and dropped. */
typedef struct ojob {
  _Alignas(64) _Atomic uint64_t ctr;  /* gen << 32 | next chunk */
  _Alignas(64) _Atomic uint32_t done;
  _Atomic uint64_t info;              /* gen << 32 | chunks */
  const otask *t;
  uint32_t gen;
} ojob;

typedef struct ostate {
  rp_exec *x;
  const rp_graph *g;
  uint32_t n, nbuf;
  unsigned ns;         /* space slots: host + one per device */
  bool serial;

  /* images: img[b * ns + slot]; shared[b]: all slots alias one memory */
  void **img;
  bool *shared;
  void **owned;        /* allocations to free */
  uint32_t nowned;

  otask *task;
  uint32_t *succ;
  rp_kargs *kargs;     /* one per node (only kernels' are used) */
  void **hptr;         /* host tasks' pointer arrays */
  uint32_t *hptr0;     /* per node: first entry in hptr */
  ocopy *copy;
  uint32_t ncopy;

  /* team */
  int nth, ngroups;
  int cores[RP_OMP_MAXT], ncores;
  int tgroup[RP_OMP_MAXT], gsize[RP_OMP_MAXT];
  unsigned long pinned[RP_OMP_MAXT];

  /* lean engine: per-group ready queues (parity double-buffered indices,
   * epoch-tagged slots), per-thread completion counts */
  _Atomic uint64_t **slots;
  uint32_t **roots, *nroots;
  padl lhead[2][RP_OMP_MAXT], ltail[2][RP_OMP_MAXT];
  padl ldone[2][RP_OMP_MAXT];
  padl cur, adv, at[RP_OMP_MAXT];
  long lepoch;
  padl help[RP_OMP_MAXT]; /* per group: an ojob* or 0 */
  ojob job[RP_OMP_MAXT];  /* per thread */
} ostate;

/* Decide for every buffer whether all its spaces can share one image (the
 * copies between them are then elided) and allocate the images; appends to
 * *edges (pairs from, to) the orderings that sharing requires between
 * operations of different spaces. omp_images.c. */
rp_status rp__omp_images(ostate *st, uint32_t **edges, size_t *nedges);
/* Point kernels' argument slots, host tasks' pointers at the images. */
void rp__omp_bind(ostate *st);

/* Run one task whole on the calling thread. omp_engine.c. */
void rp__omp_run_task(const ostate *st, const otask *t);
/* Build the queues once; run iterations replays on the team. */
rp_status rp__omp_engine_init(ostate *st);
void rp__omp_engine_run(ostate *st, unsigned iterations);
void rp__omp_engine_free(ostate *st);

#endif
