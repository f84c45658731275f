/* The sequential reference replay: one operation at a time, in program
 * order, on the host, with a separate host-side image of every memory
 * space. It is the oracle every backend is compared with. */
#include <stdlib.h>
#include <string.h>
#include "replay/exec.h"

typedef struct ref {
  rp_exec *x;
  const rp_graph *g;
  unsigned nspace;   /* 1 + devices */
  void **img;        /* [buffer * nspace + space + 1]; host slot unused */
  void **ptrs;       /* scratch for host tasks */
  uint32_t maxacc;
} ref;

static void *image(ref *r, rp_buf b, int space) {
  if (space == RP_SPACE_HOST)
    return rp_exec_host(r->x)[b];
  return r->img[(size_t)b * r->nspace + (unsigned)(space + 1)];
}

static void ref_destroy(void *state) {
  ref *r = state;
  if (!r)
    return;
  for (size_t i = 0; r->img && i < (size_t)r->g->nbuf * r->nspace; i++)
    free(r->img[i]);
  free(r->img);
  free(r->ptrs);
  free(r);
}

static rp_status ref_instantiate(rp_exec *x, void **state) {
  const rp_graph *g = rp_exec_graph(x);
  ref *r = calloc(1, sizeof *r);
  if (!r)
    return RP_ENOMEM;
  r->x = x;
  r->g = g;
  r->nspace = 1 + rp_graph_num_devices(g);
  r->img = calloc((size_t)g->nbuf * r->nspace + 1, sizeof *r->img);
  if (!r->img) {
    ref_destroy(r);
    return RP_ENOMEM;
  }
  for (uint32_t i = 0; i < g->nop; i++) {
    const rp__op *op = &g->op[i];
    if (op->nacc > r->maxacc)
      r->maxacc = op->nacc;
    if (op->type == RP_OP_KERNEL && (!op->kernel || !op->kernel->cpu)) {
      rp_exec_set_error(x, "kernel \"%s\" has no CPU body%s", op->name,
                        op->kernel ? "" : " (graph loaded from a file)");
      ref_destroy(r);
      return RP_ENOKERNEL;
    }
    if (op->type == RP_OP_HOST && !op->fn) {
      rp_exec_set_error(x, "host task \"%s\" has no function (graph loaded "
                        "from a file)", op->name);
      ref_destroy(r);
      return RP_ENOKERNEL;
    }
    const rp__access *a = rp__op_acc(g, i);
    for (uint32_t k = 0; k < op->nacc; k++) {
      if (a[k].space == RP_SPACE_HOST)
        continue;
      size_t slot = (size_t)a[k].region.buf * r->nspace + a[k].space + 1;
      if (!r->img[slot] &&
          !(r->img[slot] = calloc(1, g->buf[a[k].region.buf].bytes))) {
        ref_destroy(r);
        return RP_ENOMEM;
      }
    }
  }
  if (!(r->ptrs = calloc(r->maxacc + 1, sizeof *r->ptrs))) {
    ref_destroy(r);
    return RP_ENOMEM;
  }
  *state = r;
  return RP_OK;
}

struct cpy {
  char *dst;
  const char *src;
};

static void copy_run(void *ctx, uint64_t off, uint64_t len) {
  struct cpy *c = ctx;
  memmove(c->dst + off, c->src + off, len);
}

static rp_status run_op(ref *r, rp_node n) {
  const rp_graph *g = r->g;
  const rp__op *op = &g->op[n];
  const rp__access *a = rp__op_acc(g, n);
  switch (op->type) {
  case RP_OP_KERNEL: {
    rp_kargs ka = *rp_exec_args(r->x, n);
    const rp_kernel *k = op->kernel;
    for (unsigned p = 0; p < k->nparams; p++)
      if (k->params[p].mode != RP_SCALAR)
        ka.a[p].p = image(r, g->args[op->arg0 + p].region.buf, op->device);
    uint64_t lo[3] = {0, 0, 0};
    k->cpu(&ka, lo, ka.n);
    return RP_OK;
  }
  case RP_OP_HOST:
    for (uint32_t k = 0; k < op->nacc; k++)
      r->ptrs[k] = image(r, a[k].region.buf, RP_SPACE_HOST);
    op->fn(op->user, r->ptrs);
    return RP_OK;
  default: {
    /* Copies: access 0 is the source, access 1 the destination. */
    struct cpy c = {image(r, a[1].region.buf, a[1].space),
                    image(r, a[0].region.buf, a[0].space)};
    if (!c.dst || !c.src) {
      rp_exec_set_error(r->x, "copy \"%s\": buffer \"%s\" has no image in "
                        "one of its spaces", op->name,
                        g->buf[a[0].region.buf].name);
      return RP_EBACKEND;
    }
    rp__region_each(&g->buf[a[1].region.buf], &a[1].region, copy_run, &c);
    return RP_OK;
  }
  }
}

static rp_status ref_launch(void *state, unsigned iterations) {
  ref *r = state;
  for (unsigned it = 0; it < iterations; it++)
    for (uint32_t n = 0; n < r->g->nop; n++) {
      rp_status s = run_op(r, n);
      if (s != RP_OK)
        return s;
    }
  return RP_OK;
}

static rp_status ref_wait(void *state) { return RP_OK; }
static rp_status ref_rebind(void *state, rp_buf b) { return RP_OK; }
static rp_status ref_set_scalar(void *state, rp_node n, unsigned p) {
  return RP_OK;
}

static rp_status ref_profile(void *state, double *op_us) {
  ref *r = state;
  for (uint32_t n = 0; n < r->g->nop; n++) {
    double t0 = rp__now_us();
    rp_status s = run_op(r, n);
    op_us[n] = rp__now_us() - t0;
    if (s != RP_OK)
      return s;
  }
  return RP_OK;
}

const rp_backend rp_backend_reference = {
    .abi = RP_BACKEND_ABI,
    .name = "reference",
    .priority = 0,
    .probe = NULL,
    .instantiate = ref_instantiate,
    .launch = ref_launch,
    .wait = ref_wait,
    .rebind = ref_rebind,
    .set_scalar = ref_set_scalar,
    .profile = ref_profile,
    .destroy = ref_destroy,
};
