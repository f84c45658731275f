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
 *   (StarPU-MPI's detached sends and receives of staging handles). */
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

static void sp_body(void *buffers[], void *arg) {
  (void)buffers;
  const sp_item *it = arg;
  uint64_t t0 = thread_cpu_ns();
  rp__sp_run_item(it);
  __atomic_add_fetch(&it->s->body_ns, thread_cpu_ns() - t0,
                     __ATOMIC_RELAXED);
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

static void sp_destroy(void *state) {
  sp *s = state;
  if (!s)
    return;
  set_live(s, 0);
  const sp_part *pt = &s->part;
  for (uint32_t k = 0; s->h && k < pt->nimage; k++)
    if (s->h[pt->image[k]])
      starpu_data_unregister(s->h[pt->image[k]]);
  for (uint32_t k = 0; s->sh && k < pt->nnode; k++)
    if (s->sh[pt->node[k]])
      starpu_data_unregister(s->sh[pt->node[k]]);

  for (uint32_t k = 0; s->img && k < pt->nimage; k++)
    free(s->img[pt->image[k]]);
  for (uint32_t k = 0; s->stage && k < pt->nnode; k++)
    free(s->stage[pt->node[k]]);
  rp__sp_part_free(&s->part);
  free(s->img);
  free(s->h);
  free(s->kern);
  free(s->stage);
  free(s->stage_bytes);
  free(s->sh);
  free(s->item);
  free(s->descr);
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
    rp_node_info ni;
    rp_node_info_get(p->graph, nd->op, &ni);
    s->kern[v] = ni.kernel;
    if (nd->type == RP_OP_KERNEL && (!ni.kernel || !ni.kernel->cpu)) {
      rp_exec_set_error(s->x, "starpu: kernel \"%s\" has no CPU body%s",
                        ni.name, ni.kernel ? "" : " (graph loaded from a "
                        "file)");
      return RP_ENOKERNEL;
    }
    rp_host_fn fn;
    void *user;
    if (nd->type == RP_OP_HOST &&
        (rp_node_host_fn(p->graph, nd->op, &fn, &user) != RP_OK || !fn)) {
      rp_exec_set_error(s->x, "starpu: host task \"%s\" has no function "
                        "(graph loaded from a file)", ni.name);
      return RP_ENOKERNEL;
    }
  }
  return RP_OK;
}

static void *image_ptr(const sp *s, uint32_t i) {
  const rp_plan_image *im = &s->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(s->x)[im->buf]
                                   : (void *)((uintptr_t)s->img[i] - im->lo);
}

/* The images this rank holds, their handles; the staging buffers of the
 * copies between ranks it takes part in. */
static rp_status alloc_data(sp *s) {
  const rp_plan *p = s->p;
  const sp_part *pt = &s->part;
  int data = s->mode != SP_EXPLICIT;
  for (uint32_t k = 0; k < pt->nimage; k++) {
    uint32_t i = pt->image[k];
    const rp_plan_image *im = &p->image[i];
    /* only the bytes its accesses touch, [lo, hi): a rank's images hold
     * its rows and halos, not the whole grid */
    uint64_t n = im->hi > im->lo ? im->hi - im->lo : 1;
    if (!(im->flags & RP_IMAGE_USER) && !(s->img[i] = calloc(1, n)))
      return RP_ENOMEM;
    if (data) {
      int user = (im->flags & RP_IMAGE_USER) != 0;
      starpu_vector_data_register(
          &s->h[i], STARPU_MAIN_RAM,
          user ? (uintptr_t)image_ptr(s, i) : (uintptr_t)s->img[i],
          user ? im->bytes : n, 1);
      s->st.handles++;
    }
  }
  for (uint32_t k = 0; s->mode == SP_MPI && k < pt->nnode; k++) {
    uint32_t v = pt->node[k];
    const rp_plan_node *nd = &p->node[v];
    if (nd->type != RP_OP_COPY_H2D && nd->type != RP_OP_COPY_D2H &&
        nd->type != RP_OP_COPY_D2D)
      continue;
    const rp_plan_access *a = p->acc + nd->acc0;
    int src = rp__sp_space_rank(a[0].space, s->nranks);
    int dst = rp__sp_space_rank(a[1].space, s->nranks);
    if (src == dst)
      continue;
    const uint64_t *iv = p->iv + 2 * (uint64_t)a[1].iv0;
    uint64_t n = 0;
    for (uint32_t j = 0; j < a[1].niv; j++)
      n += iv[2 * j + 1];
    s->stage_bytes[v] = n;
    if (!(s->stage[v] = calloc(1, n ? n : 1)))
      return RP_ENOMEM;
    starpu_vector_data_register(&s->sh[v], STARPU_MAIN_RAM,
                                (uintptr_t)s->stage[v], n ? n : 1, 1);
    s->st.handles++;
  }
  return RP_OK;
}

static rp_status sp_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  int mode = parse_mode(rp_exec_opts_get(x)->mode);
  if (mode < 0) {
    rp_exec_set_error(x, "starpu: unknown mode \"%s\" (implicit, explicit, "
                      "mpi)", rp_exec_opts_get(x)->mode);
    return RP_EINVAL;
  }
  char err[256] = "";
  int rank, nranks;
  rp_status st = rp__sp_start(mode == SP_MPI, &rank, &nranks, err,
                              sizeof err);
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
  s->stage = calloc(nn, sizeof *s->stage);
  s->stage_bytes = calloc(nn, sizeof *s->stage_bytes);
  s->sh = calloc(nn, sizeof *s->sh);
  s->ndone = calloc(nn, sizeof *s->ndone);
  s->mine = calloc(nn, sizeof *s->mine);
  if (!s->img || !s->h || !s->kern || !s->stage || !s->stage_bytes ||
      !s->sh || !s->ndone || !s->mine) {
    st = RP_ENOMEM;
    goto fail;
  }
  double t0 = rp_clock_us();
  if ((st = rp__sp_part(p, mode, rank, nranks, &s->part)) != RP_OK)
    goto fail;
  if ((st = check_bodies(s)) != RP_OK || (st = alloc_data(s)) != RP_OK)
    goto fail;
  if (mode == SP_MPI) {
    pthread_mutex_lock(&live_mu);
    s->tag0 = ++mpi_execs << 32;
    pthread_mutex_unlock(&live_mu);
  }
  if ((st = rp__sp_lower(s)) != RP_OK)
    goto fail;
  uint32_t handles = s->st.handles;
  rp__sp_part_stats(p, &s->part, rank, nranks, &s->st);
  s->st.handles = handles;
  s->st.lower_us = rp_clock_us() - t0;
  if (mode == SP_EXPLICIT) {
    uint32_t maxp = 0;
    for (uint32_t v = 0; v < p->nnode; v++)
      if (p->node[v].npred > maxp)
        maxp = p->node[v].npred;
    s->cur = calloc(nn, sizeof *s->cur);
    s->prev = calloc(nn, sizeof *s->prev);
    s->deps = calloc(nn > maxp + 1 ? nn : maxp + 1, sizeof *s->deps);
    if (!s->cur || !s->prev || !s->deps) {
      st = RP_ENOMEM;
      goto fail;
    }
  }
  set_live(s, 1);
  *state = s;
  return RP_OK;
fail:
  sp_destroy(s);
  return st;
}

static void sp_done(void *arg) {
  sp *s = arg;
  pthread_mutex_lock(&s->mu);
  if (!--s->pending)
    pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void sp_task_ready(void *arg) {
  (void)arg;
  rp__sp_ready(1);
}

static void sp_task_done(void *arg) {
  rp__sp_ready(0);
  sp_done(arg);
}

/* Submit one item of the task list (implicit and mpi modes). */
static rp_status submit(sp *s, sp_item *it) {
  pthread_mutex_lock(&s->mu);
  s->pending++;
  pthread_mutex_unlock(&s->mu);
  int r;
  switch (it->kind) {
#ifdef RP_STARPU_MPI
  case SP_SEND:
    r = starpu_mpi_isend_detached(s->sh[it->v], it->peer,
                                  (starpu_mpi_tag_t)(s->tag0 + it->v),
                                  MPI_COMM_WORLD, sp_done, s);
    break;
  case SP_RECV:
    r = starpu_mpi_irecv_detached(s->sh[it->v], it->peer,
                                  (starpu_mpi_tag_t)(s->tag0 + it->v),
                                  MPI_COMM_WORLD, sp_done, s);
    break;
#endif
  default:
    if (s->mode == SP_MPI)
      r = starpu_task_insert(
          &sp_cl, STARPU_CL_ARGS_NFREE, it, sizeof *it,
          STARPU_DATA_MODE_ARRAY, s->descr + it->d0, (int)it->nd,
          STARPU_PROLOGUE_CALLBACK, sp_task_ready,
          STARPU_CALLBACK_WITH_ARG_NFREE, sp_task_done, s, 0);
    else
      r = starpu_task_insert(&sp_cl, STARPU_CL_ARGS_NFREE, it, sizeof *it,
                             STARPU_DATA_MODE_ARRAY, s->descr + it->d0,
                             (int)it->nd, STARPU_CALLBACK_WITH_ARG_NFREE,
                             sp_done, s, 0);
  }
  if (r) {
    sp_done(s);
    rp_exec_set_error(s->x, "starpu: submitting node %u failed (%d)", it->v,
                      r);
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
      t->cl_arg = &s->item[v];
      t->nbuffers = 0;
      unsigned n = 0;
      for (uint32_t k = 0; k < nd->npred; k++)
        s->deps[n++] = s->cur[p->pred[nd->pred0 + k]];
      if (!n && join)
        s->deps[n++] = join;
      if (n)
        starpu_task_declare_deps_array(t, n, s->deps);
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
  if (s->mode != SP_MPI)
    rp__sp_busy(1);
  rp_status st = RP_OK;
  if (s->mode == SP_EXPLICIT) {
    st = launch_explicit(s, iterations);
  } else {
    for (unsigned it = 0; it < iterations && st == RP_OK; it++)
      for (uint32_t i = 0; i < s->nitem && st == RP_OK; i++)
        st = submit(s, &s->item[i]);
    set_progress(s, 1, 1);
    wait_pending(s);
#ifdef STARPU_USE_CUDA
    /* a CUDA body left its result on the device: bring the user's arrays
     * home (StarPU copies only what a device wrote) */
    for (uint32_t k = 0; starpu_cuda_worker_get_count() &&
                         k < s->part.nimage; k++) {
      uint32_t i = s->part.image[k];
      if ((s->p->image[i].flags & RP_IMAGE_USER) && s->h[i] &&
          !starpu_data_acquire(s->h[i], STARPU_R))
        starpu_data_release(s->h[i]);
    }
#endif
  }
  if (s->mode != SP_MPI)
    rp__sp_busy(0);
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
static rp_status sp_wait_buffer(void *state, rp_buf b) {
  sp *s = state;
  const rp_plan *p = s->p;
  unsigned iters;
  uint64_t batch = rp_exec_batch(s->x, &iters);
  pthread_mutex_lock(&s->mu);
  for (;;) {
    int done = s->batch == batch;
#ifdef STARPU_USE_CUDA
    /* a CUDA writer's result reaches the array at the batch's end */
    if (starpu_cuda_worker_get_count() && s->mode != SP_EXPLICIT)
      done = done && !s->running;
#endif
    if (done && s->running && !s->failed)
      for (uint32_t i = p->hw_off[b]; i < p->hw_off[b + 1]; i++) {
        uint32_t v = p->host_writers[i];
        if (s->mine[v] && s->ndone[v] < iters)
          done = 0;
      }
    if (done)
      break;
    pthread_cond_wait(&s->cv, &s->mu);
  }
  int failed = s->batch == batch && s->failed;
  pthread_mutex_unlock(&s->mu);
  return failed ? RP_ETASK : RP_OK; /* the core then waits and reports */
}

static rp_status sp_rebind(void *state, rp_buf b) {
  sp *s = state;
  for (uint32_t k = 0; k < s->part.nimage; k++) {
    uint32_t i = s->part.image[k];
    const rp_plan_image *im = &s->p->image[i];
    if (im->buf != b || !(im->flags & RP_IMAGE_USER) || !s->h[i])
      continue;
    starpu_data_handle_t old = s->h[i];
    starpu_data_unregister_no_coherency(old);
    starpu_vector_data_register(&s->h[i], STARPU_MAIN_RAM,
                                (uintptr_t)image_ptr(s, i), im->bytes, 1);
    /* the task list names handles: point it at the new one */
    for (uint32_t k = 0; k < s->ndescr; k++)
      if (s->descr[k].handle == old)
        s->descr[k].handle = s->h[i];
  }
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
    sp_item it = {s, v, SP_RUN, 0, 0, 0};
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
    .destroy = sp_destroy,
    .exec_flags = sp_exec_flags,
};
