/* The starpu backend: replays the plan as StarPU tasks running the CPU
 * bodies of the kernels, the host tasks and the copies. The task list is
 * lowered once at instantiate (sp_lower.c); a replay submits it again.
 *
 * Modes (rp_exec_opts.mode):
 * - "explicit" (default): the plan's edges as task dependencies; replay
 *   k + 1 starts after replay k (a join task between them). Faster than
 *   "implicit" on every shape of tools/bench/bench_starpu (docs/
 *   benchmarks.md): it keeps the parallelism between row blocks of one
 *   image, which whole-image data dependencies serialise.
 * - "implicit": one StarPU data handle per plan image (a vector over the
 *   image's memory); each task accesses its images R, W or RW, and
 *   StarPU's sequential consistency orders the tasks, across replays too.
 * In every mode rp_exec_wait_buffer() waits for the buffer's writers only,
 * and a task failing (rp_task_fail) stops the batch: the tasks after it do
 * nothing and the launch reports the first failure.
 * - "mpi": ranks of MPI_COMM_WORLD; every space has its own image, owned
 *   by one rank (the host by rank 0, device d by rank d % nranks); each
 *   rank submits only the tasks it runs and the messages its data feed
 *   (StarPU-MPI's detached sends and receives of staging handles); its
 *   tasks are ordered by explicit dependencies between those touching
 *   overlapping bytes (sp_deps.c), not by whole-image handles, which
 *   chained the ranks (issue 35). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sp_internal.h"
#ifdef RP_STARPU_MPI
#include <starpu_mpi.h>
#endif

static uint64_t thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The stamps of a task or request's item in its replay, NULL when the
 * launch is not traced. */
static sp_stamp *stamp_of(const sp_tctx *c) {
  sp *s = c->it->s;
  if (!s->stamp || c->rep >= s->trace_reps)
    return NULL;
  return &s->stamp[(size_t)c->rep * s->nitem + (size_t)(c->it - s->item)];
}

static double since(const sp *s) { return rp_clock_us() - s->t0; }

/* ThreadSanitizer does not see the ordering StarPU (not instrumented)
 * gives its tasks: each body acquires at its start what the submitting
 * thread released before each submission and every body at its end, so
 * that the bodies StarPU ran one after the other are ordered for TSan and
 * its suppressions need not hide every stack through libstarpu
 * (scripts/tsan.supp); bodies that overlap in time are still checked
 * against each other. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SP_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SP_TSAN 1
#endif
#ifdef SP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static char sp_hb; /* one order for all: a body reads its context first */
#define SP_HB_ACQUIRE(s) ((void)(s), __tsan_acquire(&sp_hb))
#define SP_HB_RELEASE(s) ((void)(s), __tsan_release(&sp_hb))
#else
#define SP_HB_ACQUIRE(s) ((void)(s))
#define SP_HB_RELEASE(s) ((void)(s))
#endif

static void sp_body(void *buffers[], void *arg) {
  (void)buffers;
  SP_HB_ACQUIRE(arg);
  const sp_tctx *c = arg;
  const sp_item *it = c->it;
  sp_stamp *st = stamp_of(c);
  if (st)
    st->start = since(it->s);
  uint64_t t0 = thread_cpu_ns();
  rp__sp_run_item(it);
  __atomic_add_fetch(&it->s->body_ns, thread_cpu_ns() - t0, __ATOMIC_RELAXED);
  if (st)
    st->end = since(it->s);
  SP_HB_RELEASE(it->s);
}

static struct starpu_codelet sp_cl = {
    .cpu_funcs = {sp_body},
#ifdef STARPU_USE_CUDA
    /* kernels with a CUDA body, in the modes whose tasks carry data */
    .cuda_funcs = {rp__sp_cuda_body},
    .can_execute = rp__sp_can_execute,
#endif
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "reprise",
};

/* Live states, for rp__starpu_stats_get(). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static sp *live[64];
static uint64_t mpi_execs; /* mpi execs created by this process */

static void set_live(sp *s, int on) {
  pthread_mutex_lock(&live_mu);
  for (unsigned i = 0; i < sizeof live / sizeof *live; i++)
    if (on ? !live[i] : live[i] == s) {
      live[i] = on ? s : NULL;
      break;
    }
  pthread_mutex_unlock(&live_mu);
}

rp_status rp__starpu_stats_get(const rp_exec *x, rp__starpu_stats *out) {
  rp_status st = RP_EINVAL;
  pthread_mutex_lock(&live_mu);
  for (unsigned i = 0; i < sizeof live / sizeof *live; i++)
    if (live[i] && live[i]->x == x) {
      *out = live[i]->st;
      out->body_cpu_us =
          (double)__atomic_load_n(&live[i]->body_ns, __ATOMIC_RELAXED) * 1e-3;
      st = RP_OK;
      break;
    }
  pthread_mutex_unlock(&live_mu);
  return st;
}

/* Appends figure (name, v) to out (max entries) at *n, counting it. */
static void put(rp_exec_stat *out, unsigned max, unsigned *n, const char *name,
                double v) {
  if (*n < max)
    out[*n] = (rp_exec_stat){name, v};
  (*n)++;
}

/* The breakdown's totals by name (rp_exec_trace()), in the modes that
 * trace. */
static void put_trace(sp *s, rp_exec_stat *out, unsigned max, unsigned *n) {
  rp__starpu_breakdown b;
  pthread_mutex_lock(&s->mu);
  b = s->bd;
  pthread_mutex_unlock(&s->mu);
#define SP_BD(f) put(out, max, n, "trace_" #f, (double)b.f)
  SP_BD(launches);
  SP_BD(replays);
  SP_BD(tasks);
  SP_BD(recvs);
  SP_BD(wall_us);
  SP_BD(body_us);
  SP_BD(halo_us);
  SP_BD(host_us);
  SP_BD(sched_us);
  SP_BD(recv_us);
  SP_BD(host_recv_us);
  SP_BD(submit_wait_us);
  SP_BD(other_us);
  SP_BD(submit_us);
  SP_BD(ready_lat_us);
  SP_BD(done_lat_us);
#undef SP_BD
}

/* Where StarPU-MPI placed this process's threads, by name, once started
 * (mode "mpi"). */
static void put_layout(rp_exec_stat *out, unsigned max, unsigned *n) {
  rp__starpu_layout l;
  if (rp__starpu_layout_get(&l) != RP_OK)
    return;
#define SP_LAY(f) put(out, max, n, #f, (double)l.f)
  SP_LAY(local_ranks);
  SP_LAY(local_rank);
  SP_LAY(cores);
  SP_LAY(bound);
  SP_LAY(workers);
  SP_LAY(first_cpu);
  SP_LAY(mpi_cpu);
#undef SP_LAY
}

/* The figures of rp__starpu_stats by name, for rp_exec_stats(); in modes
 * "mpi" and "implicit" the breakdown's (trace_*), in mode "mpi" the
 * layout's. */
static rp_status sp_stats(void *state, rp_exec_stat *out, unsigned max,
                          unsigned *count) {
  sp *s = state;
  rp__starpu_stats st = s->st;
  st.body_cpu_us =
      (double)__atomic_load_n(&s->body_ns, __ATOMIC_RELAXED) * 1e-3;
#define SP_STAT(f)                                                             \
  { #f, (double)st.f }
  const rp_exec_stat all[] = {
      SP_STAT(rank),        SP_STAT(nranks),      SP_STAT(nodes),
      SP_STAT(tasks),       SP_STAT(sends),       SP_STAT(recvs),
      SP_STAT(scanned),     SP_STAT(visited),     SP_STAT(accesses),
      SP_STAT(images),      SP_STAT(handles),     SP_STAT(aliased),
      SP_STAT(user_arrays), SP_STAT(image_bytes), SP_STAT(pieces),
      SP_STAT(lower_us),    SP_STAT(register_us), SP_STAT(body_cpu_us),
      SP_STAT(part_handles)};
#undef SP_STAT
  unsigned n = 0;
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++)
    put(out, max, &n, all[i].name, all[i].value);
  if (s->mode != SP_EXPLICIT)
    put_trace(s, out, max, &n);
  if (s->mode == SP_MPI)
    put_layout(out, max, &n);
  *count = n;
  return RP_OK;
}

/* The live state of exec x, with live_mu held (unlock it after use). */
static sp *find_live(const rp_exec *x) {
  pthread_mutex_lock(&live_mu);
  for (unsigned i = 0; i < sizeof live / sizeof *live; i++)
    if (live[i] && live[i]->x == x)
      return live[i];
  return NULL;
}

/* Starts (on: the totals zeroed) or stops tracing s's launches
 * (rp_exec_trace()); RP_ENOTSUP in mode "explicit", which does not
 * stamp its tasks. */
static rp_status sp_trace(void *state, int on) {
  sp *s = state;
  if (s->mode == SP_EXPLICIT) {
    rp_exec_set_error(s->x, "starpu: mode \"explicit\" does not trace (modes "
                            "\"mpi\" and \"implicit\" do)");
    return RP_ENOTSUP;
  }
  pthread_mutex_lock(&s->mu);
  s->trace = on;
  if (on)
    memset(&s->bd, 0, sizeof s->bd);
  pthread_mutex_unlock(&s->mu);
  return RP_OK;
}

rp_status rp__starpu_trace(const rp_exec *x, int on) {
  sp *s = find_live(x);
  rp_status st = s && s->mode != SP_EXPLICIT ? sp_trace(s, on) : RP_EINVAL;
  pthread_mutex_unlock(&live_mu);
  return st;
}

rp_status rp__starpu_breakdown_get(const rp_exec *x,
                                   rp__starpu_breakdown *out) {
  sp *s = find_live(x);
  rp_status st = RP_EINVAL;
  if (s && s->mode != SP_EXPLICIT) {
    pthread_mutex_lock(&s->mu);
    *out = s->bd;
    pthread_mutex_unlock(&s->mu);
    st = RP_OK;
  }
  pthread_mutex_unlock(&live_mu);
  return st;
}

static int parse_mode(const char *m) {
  if (!m || !strcmp(m, "explicit"))
    return SP_EXPLICIT;
  if (!strcmp(m, "implicit"))
    return SP_IMPLICIT;
  if (!strcmp(m, "mpi"))
    return SP_MPI;
  return -1;
}

static unsigned sp_exec_flags(const rp_exec_opts *o) {
  return parse_mode(o->mode) == SP_MPI ? RP_BACKEND_SEPARATE_IMAGES : 0;
}

/* The item tasks of the two slots, built once (implicit and mpi modes):
 * task i of slot k is s->task[k * nitem + i]. */
static int is_task_item(const sp_item *it) {
  return it->kind == SP_RUN || it->kind == SP_PACK || it->kind == SP_UNPACK;
}

/* Waits for whatever of slot k / nitem's item k % nitem is still in
 * flight (a task not waited for, a request whose callback has not run):
 * its structure and context can then be used again. A task's structure is
 * cleaned then (StarPU 1.3 cannot submit a terminated task again with
 * implicit data dependencies: it needs a fresh job, which cleaning
 * frees). */
static void settle(sp *s, size_t k) {
  if (!s->used[k])
    return;
  if (is_task_item(&s->item[k % s->nitem])) {
    struct starpu_task *t = &s->task[k];
    int r = starpu_task_wait(t); /* an error: StarPU never took it */
    (void)r;
    starpu_task_clean(t); /* frees dyn_handles and dyn_modes too */
    s->used[k] = 0;
    return;
  }
  pthread_mutex_lock(&s->mu);
  while (s->used[k])
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}

void rp__sp_destroy(void *state) {
  sp *s = state;
  if (!s)
    return;
  set_live(s, 0);
  const sp_part *pt = &s->part;
  for (size_t k = 0; s->task && k < 2 * (size_t)s->nitem; k++)
    settle(s, k);
  for (uint32_t k = 0; s->h && k < pt->nimage; k++)
    if (s->h[pt->image[k]] && !rp__sp_in_user(s->p, pt, pt->image[k]))
      starpu_data_unregister(s->h[pt->image[k]]);
  for (uint32_t b = 0; s->uh && b < s->p->nbuf; b++)
    if (s->uh[b])
      starpu_data_unregister(s->uh[b]);
  for (uint32_t k = 0; s->sh && k < pt->npiece; k++)
    if (s->sh[k])
      starpu_data_unregister(s->sh[k]);
  for (uint32_t k = 0; s->img && k < pt->nimage; k++)
    rp_image_free(s->img[pt->image[k]]);
  for (uint32_t k = 0; s->stage && k < pt->npiece; k++)
    free(s->stage[k]);
  rp__sp_part_free(&s->part);
  rp__sp_place_free(&s->place);
  free(s->img);
  free(s->h);
  free(s->uh);
  free(s->kern);
  free(s->stage);
  free(s->sh);
  free(s->item);
  free(s->descr);
  free(s->dep);
  free(s->depbuf);
  free(s->task);
  free(s->ctx);
  free(s->used);
  free(s->stamp);
  free(s->cur);
  free(s->prev);
  free(s->deps);
  free(s->ndone);
  free(s->mine);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* Every kernel needs a CPU body, every host task its function. */
static rp_status check_bodies(sp *s) {
  const rp_plan *p = s->p;
  for (uint32_t k = 0; k < s->part.nnode; k++) {
    uint32_t v = s->part.node[k];
    const rp_plan_node *nd = &p->node[v];
    s->kern[v] = nd->kernel;
    if (nd->type == RP_OP_KERNEL && (!nd->kernel || !nd->kernel->cpu)) {
      rp_exec_set_error(s->x, "starpu: kernel \"%s\" has no CPU body%s",
                        nd->name,
                        nd->kernel ? ""
                                   : " (graph loaded from a "
                                     "file)");
      return RP_ENOKERNEL;
    }
    if (nd->type == RP_OP_HOST && !nd->host_fn) {
      rp_exec_set_error(s->x,
                        "starpu: host task \"%s\" has no function "
                        "(graph loaded from a file)",
                        nd->name);
      return RP_ENOKERNEL;
    }
  }
  return RP_OK;
}

/* A StarPU handle over n bytes at p in main memory, counted and timed
 * (into *reg). */
static void register_vector(sp *s, starpu_data_handle_t *h, void *p, uint64_t n,
                            double *reg) {
  double t0 = rp_clock_us();
  starpu_vector_data_register(h, STARPU_MAIN_RAM, (uintptr_t)p, n, 1);
  *reg += rp_clock_us() - t0;
  s->st.handles++;
}

/* The handle of buffer b's user array, registered at its first use. */
static starpu_data_handle_t user_handle(sp *s, rp_buf b, double *reg) {
  if (!s->uh[b])
    register_vector(s, &s->uh[b], rp_exec_host(s->x)[b],
                    s->p->buf[b].desc.bytes, reg);
  return s->uh[b];
}

/* The images this rank holds, their handles; the staging buffers of the
 * transfers between ranks it takes part in. Registering is timed: it
 * happens here, once per exec, never in a replay. */
static rp_status alloc_data(sp *s) {
  const rp_plan *p = s->p;
  const sp_part *pt = &s->part;
  int data = s->mode != SP_EXPLICIT;
  double reg = 0;
  for (uint32_t k = 0; k < pt->nimage; k++) {
    uint32_t i = pt->image[k];
    const rp_plan_image *im = &p->image[i];
    if (rp__sp_in_user(p, pt, i)) { /* the user's array: no memory */
      if (data)
        s->h[i] = user_handle(s, im->buf, &reg);
      continue;
    }
    /* only the bytes its accesses touch, [lo, hi): a rank's images hold
     * its rows and halos, not the whole grid */
    uint64_t n = im->hi > im->lo ? im->hi - im->lo : 1;
    if (!(s->img[i] = rp_image_alloc(n)) ||
        rp_exec_guard_image(s->x, i, s->img[i]) != RP_OK)
      return RP_ENOMEM;
    if (data)
      register_vector(s, &s->h[i], s->img[i], n, &reg);
#ifdef STARPU_USE_CUDA
    /* mode "mpi": ordered by explicit dependencies (rp__sp_deps) */
    if (s->mode == SP_MPI)
      starpu_data_set_sequential_consistency_flag(s->h[i], 0);
#endif
  }
#ifdef STARPU_USE_CUDA
  for (uint32_t b = 0; s->mode == SP_MPI && b < p->nbuf; b++)
    if (s->uh[b])
      starpu_data_set_sequential_consistency_flag(s->uh[b], 0);
#endif
  for (uint32_t k = 0; s->mode == SP_MPI && k < pt->npiece; k++) {
    const sp_piece *pc = &pt->piece[k];
    if (pc->src == pc->dst)
      continue; /* a local piece: no message */
    uint64_t n = pc->bytes ? pc->bytes : 1;
    if (!(s->stage[k] = calloc(1, n)))
      return RP_ENOMEM;
    register_vector(s, &s->sh[k], s->stage[k], n, &reg);
  }
  s->st.register_us = reg;
  return RP_OK;
}

static void sp_done(void *arg) {
  sp *s = arg;
  pthread_mutex_lock(&s->mu);
  if (!--s->pending)
    pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void sp_task_ready(void *arg) {
  sp_tctx *c = arg;
  sp_stamp *st = stamp_of(c);
  if (st)
    st->ready = since(c->it->s);
  if (c->it->s->mode == SP_MPI)
    rp__sp_ready(1);
}

static void sp_task_done(void *arg) {
  sp_tctx *c = arg;
  sp_stamp *st = stamp_of(c);
  if (st)
    st->done = since(c->it->s);
  if (c->it->s->mode == SP_MPI)
    rp__sp_ready(0);
  sp_done(c->it->s);
}

/* A send or a receive completed: its context is free again. */
static void sp_req_done(void *arg) {
  sp_tctx *c = arg;
  sp *s = c->it->s;
  sp_stamp *st = stamp_of(c);
  if (st)
    st->done = since(s);
  pthread_mutex_lock(&s->mu);
  s->used[(size_t)c->slot * s->nitem + (size_t)(c->it - s->item)] = 0;
  s->pending--;
  pthread_cond_broadcast(&s->cv); /* wait_pending(), or settle() */
  pthread_mutex_unlock(&s->mu);
}

/* The task structures and contexts of both slots, once. */
static rp_status build_tasks(sp *s) {
  size_t n = 2 * (size_t)s->nitem;
  s->task = calloc(n ? n : 1, sizeof *s->task);
  s->ctx = calloc(n ? n : 1, sizeof *s->ctx);
  s->used = calloc(n ? n : 1, 1);
  s->depbuf = calloc((size_t)s->maxdep + 1, sizeof *s->depbuf);
  if (!s->task || !s->ctx || !s->used || !s->depbuf)
    return RP_ENOMEM;
  for (size_t k = 0; k < n; k++) {
    s->ctx[k].it = &s->item[k % s->nitem];
    s->ctx[k].slot = (unsigned)(k / s->nitem);
  }
  return RP_OK;
}

/* Task k made ready for submission: its item's codelet, data and
 * callbacks (no allocation unless the item has more accesses than a task
 * holds in place, STARPU_NMAXBUFS). */
static rp_status fill_task(sp *s, size_t k) {
  const sp_item *it = &s->item[k % s->nitem];
  struct starpu_task *t = &s->task[k];
  sp_tctx *c = &s->ctx[k];
  starpu_task_init(t);
  t->cl = &sp_cl;
  t->cl_arg = c;
  t->detach = 0; /* waited for before it is submitted again */
  t->destroy = 0;
  t->prologue_callback_func = sp_task_ready;
  t->prologue_callback_arg = c;
  t->callback_func = sp_task_done;
  t->callback_arg = c;
  t->nbuffers = (int)it->nd;
  const struct starpu_data_descr *d = s->descr + it->d0;
  if (it->nd > STARPU_NMAXBUFS) {
    t->dyn_handles = malloc(it->nd * sizeof *t->dyn_handles);
    t->dyn_modes = malloc(it->nd * sizeof *t->dyn_modes);
    if (!t->dyn_handles || !t->dyn_modes) {
      starpu_task_clean(t);
      return RP_ENOMEM;
    }
  }
  for (uint32_t j = 0; j < it->nd; j++) {
    STARPU_TASK_SET_HANDLE(t, d[j].handle, j);
    STARPU_TASK_SET_MODE(t, d[j].mode, j);
  }
  return RP_OK;
}

static rp_status sp_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  int mode = parse_mode(rp_exec_opts_get(x)->mode);
  if (mode < 0) {
    rp_exec_set_error(x,
                      "starpu: unknown mode \"%s\" (implicit, explicit, "
                      "mpi)",
                      rp_exec_opts_get(x)->mode);
    return RP_EINVAL;
  }
  char err[256] = "";
  int rank, nranks;
  rp_status st = rp__sp_start(mode == SP_MPI, &rank, &nranks, err, sizeof err);
  if (st != RP_OK) {
    rp_exec_set_error(x, "%s", err);
    return st;
  }
  sp *s = calloc(1, sizeof *s);
  if (!s)
    return RP_ENOMEM;
  s->x = x;
  s->p = p;
  s->mode = mode;
  s->rank = rank;
  s->nranks = nranks;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  size_t nn = (size_t)p->nnode + 1, ni = (size_t)p->nimage + 1;
  s->img = calloc(ni, sizeof *s->img);
  s->h = calloc(ni, sizeof *s->h);
  s->kern = calloc(nn, sizeof *s->kern);
  s->ndone = calloc(nn, sizeof *s->ndone);
  s->mine = calloc(nn, sizeof *s->mine);
  s->uh = calloc((size_t)p->nbuf + 1, sizeof *s->uh);
  if (!s->img || !s->h || !s->kern || !s->ndone || !s->mine || !s->uh) {
    st = RP_ENOMEM;
    goto fail;
  }
  double t0 = rp_clock_us();
  if (mode == SP_MPI && (st = rp__sp_place(p, nranks, &s->place)) != RP_OK)
    goto fail;
  if ((st = rp__sp_part(p, mode, rank, &s->place, &s->part, err, sizeof err)) !=
      RP_OK) {
    if (err[0])
      rp_exec_set_error(x, "%s", err);
    goto fail;
  }
  if ((st = rp__sp_alias(p, mode, rank, &s->place, &s->part)) != RP_OK)
    goto fail;
  size_t np = (size_t)s->part.npiece + 1;
  s->stage = calloc(np, sizeof *s->stage);
  s->sh = calloc(np, sizeof *s->sh);
  if (!s->stage || !s->sh) {
    st = RP_ENOMEM;
    goto fail;
  }
  if ((st = check_bodies(s)) != RP_OK || (st = alloc_data(s)) != RP_OK)
    goto fail;
  if (mode == SP_MPI) {
    pthread_mutex_lock(&live_mu);
    /* tags: (exec << 52) + (node << 20) + piece, below 2^63 (an exec
     * number wraps after 2047 execs of this process) */
    s->tag0 = (++mpi_execs % 2047 + 1) << 52;
    pthread_mutex_unlock(&live_mu);
  }
  if ((st = rp__sp_lower(s)) != RP_OK)
    goto fail;
  if (mode != SP_EXPLICIT && (st = build_tasks(s)) != RP_OK)
    goto fail;
  uint32_t handles = s->st.handles;
  double reg = s->st.register_us;
  rp__sp_part_stats(p, &s->part, rank, nranks, &s->st);
  s->st.handles = handles;
  s->st.register_us = reg;
  s->st.lower_us = rp_clock_us() - t0;
  if (mode == SP_EXPLICIT) {
    uint32_t maxp = 0;
    for (uint32_t v = 0; v < p->nnode; v++)
      if (p->node[v].npred > maxp)
        maxp = p->node[v].npred;
    s->cur = calloc(nn, sizeof *s->cur);
    s->prev = calloc(nn, sizeof *s->prev);
    s->deps = calloc(nn > maxp + 1 ? nn : maxp + 1, sizeof *s->deps);
    s->ctx = calloc(nn, sizeof *s->ctx);
    if (!s->cur || !s->prev || !s->deps || !s->ctx) {
      st = RP_ENOMEM;
      goto fail;
    }
    for (uint32_t i = 0; i < s->nitem; i++)
      s->ctx[i].it = &s->item[i];
  }
  set_live(s, 1);
  *state = s;
  return RP_OK;
fail:
  rp__sp_destroy(s);
  return st;
}

/* Mode "mpi": task `it` of replay rep waits for the tasks rp__sp_deps
 * found, in this replay (submitted before it) and in the previous one of
 * this launch (submitted, not yet waited for: valid; those of the launch
 * before are done). */
static void declare_deps(sp *s, const sp_item *it, unsigned rep) {
  unsigned n = 0;
  size_t cur = (size_t)(rep & 1) * s->nitem;
  size_t prev = (size_t)((rep + 1) & 1) * s->nitem;
  for (uint32_t k = 0; k < it->ndep; k++) {
    uint32_t d = s->dep[it->dep0 + k];
    if (!(d & SP_DEP_PREV))
      s->depbuf[n++] = &s->task[cur + d];
    else if (rep > 0)
      s->depbuf[n++] = &s->task[prev + (d & ~SP_DEP_PREV)];
  }
  if (n)
    starpu_task_declare_deps_array(&s->task[cur + (size_t)(it - s->item)], n,
                                   s->depbuf);
}

/* Submit item i of replay rep (implicit and mpi modes), in slot rep % 2:
 * the structure used two replays ago is waited for first. */
static rp_status submit(sp *s, uint32_t i, unsigned rep) {
  size_t k = (size_t)(rep & 1) * s->nitem + i;
  settle(s, k);
  sp_item *it = &s->item[i];
  sp_tctx *c = &s->ctx[k];
  c->rep = rep;
  pthread_mutex_lock(&s->mu);
  s->pending++;
  s->used[k] = 1;
  pthread_mutex_unlock(&s->mu);
  sp_stamp *st = stamp_of(c);
  double t0 = rp_clock_us();
  int r;
  switch (it->kind) {
#ifdef RP_STARPU_MPI
  case SP_SEND:
  case SP_RECV: {
    const sp_piece *pc = &s->part.piece[it->piece];
    starpu_mpi_tag_t tag =
        (starpu_mpi_tag_t)(s->tag0 + ((uint64_t)pc->v << 20) + pc->id);
    if (st)
      st->start = t0 - s->t0;
    if (it->kind == SP_SEND)
      r = starpu_mpi_isend_detached(s->sh[it->piece], it->peer, tag,
                                    MPI_COMM_WORLD, sp_req_done, c);
    else
      r = starpu_mpi_irecv_detached(s->sh[it->piece], it->peer, tag,
                                    MPI_COMM_WORLD, sp_req_done, c);
    break;
  }
#endif
  default:
    r = fill_task(s, k) != RP_OK ? -ENOMEM : 0;
    if (!r && s->mode == SP_MPI)
      declare_deps(s, it, rep);
    if (!r) {
      SP_HB_RELEASE(s); /* what the task reads, written before it */
      r = starpu_task_submit(&s->task[k]);
    }
    if (r)
      starpu_task_clean(&s->task[k]);
  }
  s->submit_us += rp_clock_us() - t0;
  if (r) {
    pthread_mutex_lock(&s->mu);
    s->used[k] = 0;
    pthread_mutex_unlock(&s->mu);
    sp_done(s);
    rp_exec_set_error(s->x, "starpu: submitting node %u failed (%d)", it->v, r);
    return RP_EBACKEND;
  }
  return RP_OK;
}

static void wait_pending(sp *s) {
  pthread_mutex_lock(&s->mu);
  while (s->pending)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}

static void drop_tasks(sp *s, struct starpu_task **t) {
  for (uint32_t v = 0; v <= s->p->nnode; v++)
    if (t[v]) {
      if (starpu_task_wait(t[v]))
        continue; /* never submitted: StarPU did not take it */
      starpu_task_destroy(t[v]);
      t[v] = NULL;
    }
}

static struct starpu_task *new_task(void) {
  struct starpu_task *t = starpu_task_create();
  if (t) {
    t->detach = 0;
    t->destroy = 0;
  }
  return t;
}

/* Explicit mode: replay by replay, the plan's edges as dependencies. */
static rp_status launch_explicit(sp *s, unsigned iterations) {
  const rp_plan *p = s->p;
  rp_status st = RP_OK;
  for (unsigned it = 0; it < iterations && st == RP_OK &&
                        !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE);
       it++) {
    struct starpu_task *join = NULL;
    if (it > 0) {
      unsigned n = 0;
      for (uint32_t v = 0; v < p->nnode; v++)
        if (!p->node[v].nsucc)
          s->deps[n++] = s->prev[v];
      if (!(join = new_task())) {
        st = RP_ENOMEM;
        break;
      }
      if (n)
        starpu_task_declare_deps_array(join, n, s->deps);
      SP_HB_RELEASE(s);
      if (starpu_task_submit(join)) {
        starpu_task_destroy(join);
        st = RP_EBACKEND;
        break;
      }
    }
    s->cur[p->nnode] = join;
    for (uint32_t v = 0; v < p->nnode && st == RP_OK; v++) {
      const rp_plan_node *nd = &p->node[v];
      struct starpu_task *t = new_task();
      if (!t) {
        st = RP_ENOMEM;
        break;
      }
      t->cl = &sp_cl;
      t->cl_arg = &s->ctx[v];
      t->nbuffers = 0;
      unsigned n = 0;
      for (uint32_t k = 0; k < nd->npred; k++)
        s->deps[n++] = s->cur[p->pred[nd->pred0 + k]];
      if (!n && join)
        s->deps[n++] = join;
      if (n)
        starpu_task_declare_deps_array(t, n, s->deps);
      SP_HB_RELEASE(s);
      if (starpu_task_submit(t)) {
        starpu_task_destroy(t);
        rp_exec_set_error(s->x, "starpu: submitting node %u failed", v);
        st = RP_EBACKEND;
        break;
      }
      s->cur[v] = t;
    }
    drop_tasks(s, s->prev);
    struct starpu_task **tmp = s->prev;
    s->prev = s->cur;
    s->cur = tmp;
  }
  drop_tasks(s, s->cur);
  drop_tasks(s, s->prev);
  return st;
}

static void set_progress(sp *s, int submitted, int running) {
  pthread_mutex_lock(&s->mu);
  s->submitted = submitted;
  s->running = running;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* A traced launch: stamps for its first SP_TRACE_REPS replays, unset. */
static void trace_begin(sp *s, unsigned iterations) {
  s->submit_us = 0;
  s->submit_end = 0;
  unsigned reps = iterations < SP_TRACE_REPS ? iterations : SP_TRACE_REPS;
  if (!s->trace || s->mode == SP_EXPLICIT || !reps) {
    s->trace_reps = 0;
    return;
  }
  if (reps > s->trace_reps || !s->stamp) {
    free(s->stamp);
    s->stamp = malloc((size_t)reps * s->nitem * sizeof *s->stamp + 1);
  }
  s->trace_reps = s->stamp ? reps : 0;
  for (size_t k = 0; k < (size_t)s->trace_reps * s->nitem; k++)
    s->stamp[k] = (sp_stamp){-1, -1, -1, -1};
}

static rp_status sp_launch(void *state, unsigned iterations) {
  sp *s = state;
  pthread_mutex_lock(&s->mu);
  s->batch = rp_exec_batch(s->x, NULL);
  s->submitted = 0;
  s->running = 1;
  s->failed = 0;
  s->fail_code = 0;
  for (uint32_t k = 0; k < s->part.nnode; k++)
    s->ndone[s->part.node[k]] = 0;
  pthread_mutex_unlock(&s->mu);
  s->t0 = rp_clock_us();
  trace_begin(s, iterations);
  if (s->mode != SP_MPI)
    rp__sp_busy(1);
  rp_status st = RP_OK;
  if (s->mode == SP_EXPLICIT) {
    st = launch_explicit(s, iterations);
  } else {
    for (unsigned it = 0; it < iterations && st == RP_OK; it++)
      for (uint32_t i = 0; i < s->nitem && st == RP_OK; i++)
        st = submit(s, i, it);
    s->submit_end = since(s);
    set_progress(s, 1, 1);
    wait_pending(s);
    for (size_t k = 0; k < 2 * (size_t)s->nitem; k++)
      settle(s, k); /* every structure free for the next launch */
#ifdef STARPU_USE_CUDA
    /* a CUDA body left its result on the device: bring the user's arrays
     * home (StarPU copies only what a device wrote) */
    for (uint32_t k = 0; starpu_cuda_worker_get_count() && k < s->part.nimage;
         k++) {
      uint32_t i = s->part.image[k];
      if ((s->p->image[i].flags & RP_IMAGE_USER) && s->h[i] &&
          !starpu_data_acquire(s->h[i], STARPU_R))
        starpu_data_release(s->h[i]);
    }
#endif
  }
  if (s->mode != SP_MPI)
    rp__sp_busy(0);
  SP_HB_ACQUIRE(s); /* every body of the batch is done */
  if (s->trace_reps) {
    pthread_mutex_lock(&s->mu);
    rp__sp_trace_account(s, iterations, since(s));
    pthread_mutex_unlock(&s->mu);
  }
  if (st == RP_OK && s->failed)
    st = rp_exec_fail_task(s->x, s->fail_v, s->fail_rep, s->fail_code,
                           s->fail_msg);
  set_progress(s, 1, 0);
  return st;
}

static rp_status sp_wait(void *state) { return RP_OK; }

/* Done when this batch's last replay has run every node that writes the
 * buffer's user array here (the nodes count their runs), or the batch
 * ended (finished or failed). */
typedef struct sp_wait_ctx {
  const sp *s;
  rp_buf b;
  uint64_t batch;
  unsigned iters;
  int failed; /* set with the answer, under the lock */
} sp_wait_ctx;

static int sp_buffer_ready(void *ctx) {
  sp_wait_ctx *w = ctx;
  const sp *s = w->s;
  const rp_plan *p = s->p;
  int done = s->batch == w->batch;
#ifdef STARPU_USE_CUDA
  /* a CUDA writer's result reaches the array at the batch's end */
  if (starpu_cuda_worker_get_count() && s->mode != SP_EXPLICIT)
    done = done && !s->running;
#endif
  if (done && s->running && !s->failed)
    for (uint32_t i = p->hw_off[w->b]; i < p->hw_off[w->b + 1]; i++) {
      uint32_t v = p->host_writers[i];
      if (s->ndone[v] < (uint64_t)w->iters * s->mine[v])
        done = 0;
    }
  w->failed = s->batch == w->batch && s->failed;
  return done;
}

static rp_status sp_wait_buffer(void *state, rp_buf b) {
  sp *s = state;
  sp_wait_ctx w = {.s = s, .b = b};
  w.batch = rp_exec_batch(s->x, &w.iters);
  rp_backend_wait_progress(&s->mu, &s->cv, sp_buffer_ready, &w, 0);
  return w.failed ? RP_ETASK : RP_OK; /* the core then waits and reports */
}

static rp_status sp_rebind(void *state, rp_buf b) {
  sp *s = state;
  starpu_data_handle_t old = s->uh[b];
  if (!old)
    return RP_OK; /* this rank does not use the array (or mode explicit) */
  starpu_data_unregister_no_coherency(old);
  starpu_vector_data_register(&s->uh[b], STARPU_MAIN_RAM,
                              (uintptr_t)rp_exec_host(s->x)[b],
                              s->p->buf[b].desc.bytes, 1);
  /* the images and the task list name handles: point them at the new one
   * (tasks are filled from the list at each submission) */
  for (uint32_t k = 0; k < s->part.nimage; k++)
    if (s->h[s->part.image[k]] == old)
      s->h[s->part.image[k]] = s->uh[b];
  for (uint32_t k = 0; k < s->ndescr; k++)
    if (s->descr[k].handle == old)
      s->descr[k].handle = s->uh[b];
  return RP_OK;
}

static rp_status sp_set_scalar(void *state, uint32_t n, unsigned param) {
  return RP_OK; /* kernels read their arguments when they run */
}

static rp_status sp_profile(void *state, double *node_us) {
  sp *s = state;
  if (s->mode == SP_MPI) {
    rp_exec_set_error(s->x, "starpu: no profile in mode \"mpi\"");
    return RP_ENOTSUP;
  }
  for (uint32_t v = 0; v < s->p->nnode; v++) {
    sp_item it = {.s = s, .v = v, .piece = RP_NONE, .kind = SP_RUN};
    double t0 = rp_clock_us();
    rp__sp_run_item(&it);
    node_us[v] = rp_clock_us() - t0;
  }
  return RP_OK;
}

const rp_backend rp_backend_starpu = {
    .abi = RP_BACKEND_ABI,
    .name = "starpu",
    .priority = -1, /* never chosen by "auto": asked for by name */
    .owns = RP_DEVICE_CPU,
    .flags = RP_BACKEND_BLOCKING_LAUNCH,
    .probe = NULL,
    .instantiate = sp_instantiate,
    .launch = sp_launch,
    .wait = sp_wait,
    .wait_buffer = sp_wait_buffer,
    .rebind = sp_rebind,
    .set_scalar = sp_set_scalar,
    .profile = sp_profile,
    .destroy = rp__sp_destroy,
    .exec_flags = sp_exec_flags,
    .stats = sp_stats,
    .trace = sp_trace,
    .predict = rp__sp_predict_named,
};
