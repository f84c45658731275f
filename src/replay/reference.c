/* The sequential reference replay: one operation at a time, in program
 * order, on the host, with an image of its own for every memory space of
 * every buffer (device images start zeroed). It is the oracle every
 * backend is compared with. It reads only the plan, like every backend. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "replay/check_run.h"
#include "reprise/backend.h"

typedef struct ref {
  rp_exec *x;
  const rp_plan *p;
  void **img;  /* per plan image; user images are looked up live */
  void **ptrs; /* scratch for host tasks */
  /* Progress, for wait_buffer: batch being run, replays of it done, nodes
   * of the current replay done. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t batch;
  unsigned reps_done;
  uint32_t nodes_done;
  int running;
  int check;              /* checking mode: kernels and host tasks on shadows */
  rp__check_cache *cache; /* checking mode: the shadows' mappings */
} ref;

static void *image(ref *r, uint32_t i) {
  const rp_plan_image *im = &r->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(r->x)[im->buf] : r->img[i];
}

static void ref_destroy(void *state) {
  ref *r = state;
  if (!r)
    return;
  for (uint32_t i = 0; r->img && i < r->p->nimage; i++)
    rp_image_free(r->img[i]);
  free(r->img);
  free(r->ptrs);
  rp__check_cache_free(r->cache);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

static rp_status instantiate(rp_exec *x, const rp_plan *p, void **state,
                             int check);

static rp_status ref_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  return instantiate(x, p, state, 0);
}

/* Checking mode: the options of the CPU backend asked for (its mode,
 * threads, cores) do not apply to the one-at-a-time replay. */
static rp_status checked_instantiate(rp_exec *x, const rp_plan *p,
                                     void **state) {
  return instantiate(x, p, state, 1);
}

static rp_status instantiate(rp_exec *x, const rp_plan *p, void **state,
                             int check) {
  const rp_exec_opts *o = rp_exec_opts_get(x);
  /* Its other options are none (rp_backend.options): the core refused
   * them. */
  if (!check && o->mode && strcmp(o->mode, "serial")) {
    rp_exec_set_error(x,
                      "reference: mode \"%s\" is not supported (it "
                      "runs one operation at a time on the calling "
                      "thread's behalf, every device in host memory)",
                      o->mode);
    return RP_EINVAL;
  }
  ref *r = calloc(1, sizeof *r);
  if (!r)
    return RP_ENOMEM;
  r->x = x;
  r->p = p;
  r->check = check;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  uint32_t maxacc = 0;
  r->img = calloc(p->nimage + 1, sizeof *r->img);
  if (!r->img)
    goto nomem;
  for (uint32_t i = 0; i < p->nimage; i++)
    if (!(p->image[i].flags & RP_IMAGE_USER) &&
        (!(r->img[i] = rp_image_alloc(p->image[i].bytes)) ||
         rp_exec_guard_image(x, i, r->img[i]) != RP_OK))
      goto nomem;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    if (nd->nacc > maxacc)
      maxacc = nd->nacc;
    if (nd->type == RP_OP_KERNEL && (!nd->kernel || !nd->kernel->cpu)) {
      rp_exec_set_error(x, "kernel \"%s\" has no CPU body%s", nd->name,
                        nd->kernel ? "" : " (graph loaded from a file)");
      ref_destroy(r);
      return RP_ENOKERNEL;
    }
    if (nd->type == RP_OP_HOST && !nd->host_fn) {
      rp_exec_set_error(x,
                        "host task \"%s\" has no function (graph loaded "
                        "from a file)",
                        nd->name);
      ref_destroy(r);
      return RP_ENOKERNEL;
    }
  }
  if (!(r->ptrs = calloc(maxacc + 1, sizeof *r->ptrs)) ||
      (check && !(r->cache = rp__check_cache_new(p->nimage))))
    goto nomem;
  *state = r;
  return RP_OK;
nomem:
  ref_destroy(r);
  return RP_ENOMEM;
}

static void *image_addr(void *ctx, uint32_t i) { return image(ctx, i); }

/* RP_OK, or in checking mode RP_EACCESS (the exec's error set) or
 * RP_ENOMEM. */
static rp_status run_node(ref *r, uint32_t v) {
  if (!r->check) {
    rp_plan_run_on_host(r->x, v, image_addr, r, r->ptrs);
    return RP_OK;
  }
  char msg[480];
  rp_status s = rp__run_checked(r->x, v, image_addr, r, r->ptrs, r->cache, msg,
                                sizeof msg);
  if (s != RP_OK)
    rp_exec_set_error(r->x, "%s", msg);
  return s;
}

static void progress(ref *r, unsigned reps, uint32_t nodes) {
  pthread_mutex_lock(&r->mu);
  r->reps_done = reps;
  r->nodes_done = nodes;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static rp_status ref_launch(void *state, unsigned iterations) {
  ref *r = state;
  pthread_mutex_lock(&r->mu);
  r->batch = rp_exec_batch(r->x, NULL);
  r->reps_done = 0;
  r->nodes_done = 0;
  r->running = 1;
  pthread_mutex_unlock(&r->mu);
  rp_status s = RP_OK;
  for (unsigned it = 0; it < iterations && s == RP_OK; it++) {
    for (uint32_t v = 0; v < r->p->nnode; v++) {
      if ((s = run_node(r, v)) != RP_OK)
        break;
      char msg[256];
      int code = rp_task_take_failure(msg, sizeof msg);
      if (code) {
        s = rp_exec_fail_task(r->x, v, it, code, msg);
        break;
      }
      progress(r, it, v + 1);
    }
    if (s == RP_OK)
      progress(r, it + 1, 0);
  }
  pthread_mutex_lock(&r->mu);
  r->running = 0;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return s;
}

static rp_status ref_wait(void *state) { return RP_OK; }

/* Done when the batch's last replay has run past the last node writing
 * the buffer's user array. */
typedef struct ref_wait_ctx {
  const ref *r;
  uint64_t batch;
  unsigned iters;
  uint32_t need; /* nodes of the last replay to have run */
} ref_wait_ctx;

static int ref_buffer_ready(void *ctx) {
  const ref_wait_ctx *w = ctx;
  const ref *r = w->r;
  return r->batch == w->batch &&
         (!r->running || r->reps_done >= w->iters ||
          (r->reps_done == w->iters - 1 && r->nodes_done >= w->need));
}

static rp_status ref_wait_buffer(void *state, rp_buf b) {
  ref *r = state;
  const rp_plan *p = r->p;
  ref_wait_ctx w = {.r = r};
  w.batch = rp_exec_batch(r->x, &w.iters);
  for (uint32_t i = p->hw_off[b]; i < p->hw_off[b + 1]; i++)
    if (p->host_writers[i] + 1 > w.need)
      w.need = p->host_writers[i] + 1;
  rp_backend_wait_progress(&r->mu, &r->cv, ref_buffer_ready, &w, 0);
  return RP_OK;
}

static rp_status ref_rebind(void *state, rp_buf b) { return RP_OK; }
static rp_status ref_set_scalar(void *state, uint32_t n, unsigned p) {
  return RP_OK;
}

static rp_status ref_profile(void *state, double *node_us) {
  ref *r = state;
  for (uint32_t v = 0; v < r->p->nnode; v++) {
    double t0 = rp_clock_us();
    rp_status s = run_node(r, v);
    node_us[v] = rp_clock_us() - t0;
    if (s != RP_OK)
      return s;
  }
  return RP_OK;
}

/* The reference and its checking mode differ in their instantiate. */
#define REF_TABLE(inst)                                                        \
  {                                                                            \
    .abi = RP_BACKEND_ABI, .name = "reference", .priority = 0,                 \
    .owns = RP_DEVICE_CPU,                                                     \
    .flags = RP_BACKEND_BLOCKING_LAUNCH | RP_BACKEND_SEPARATE_IMAGES,          \
    .probe = NULL, .instantiate = (inst), .launch = ref_launch,                \
    .wait = ref_wait, .wait_buffer = ref_wait_buffer, .rebind = ref_rebind,    \
    .set_scalar = ref_set_scalar, .profile = ref_profile,                      \
    .destroy = ref_destroy                                                     \
  }

const rp_backend rp_backend_reference = REF_TABLE(ref_instantiate);
const rp_backend rp__backend_checked = REF_TABLE(checked_instantiate);
