/* Checking mode: a kernel's CPU body or a host task run on shadow images
 * of its buffers, to catch the accesses outside its declared regions, as
 * compute-sanitizer does for CUDA (rp_exec_opts.check, RP_CHECK=1).
 *
 * Each buffer the operation names gets a shadow: an inaccessible mapping
 * the size of the buffer (and a guard page on each side) in which only the
 * pages holding declared bytes are readable and writable; declared bytes
 * hold the image's bytes, the others a canary. The body runs twice, with
 * the shadow placed so that the first byte past the declared bytes starts
 * an inaccessible page (a read one past the end faults), then so that the
 * byte before them ends one (a read one before the start faults), with
 * different canaries. A fault (SIGSEGV, SIGBUS) is caught with a handler
 * installed only around the body and siglongjmp; a changed canary is a
 * write outside the regions, a changed byte of an `in` region a write to
 * it; results that differ between the two runs come from undeclared bytes
 * read, and the byte is found by bisecting the canaries. Faults name the
 * byte exactly; reads within a page of declared bytes are seen only when
 * the result depends on them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "replay/check_run.h"

enum { CANARY_A = 0xA5, CANARY_B = 0x5A };
enum { END_AT_PAGE = 0, START_AT_PAGE = 1 };

/* Declared bytes [off, off + len) of a shadow: kind 1 read only, 2
 * written (out or inout through some parameter). */
typedef struct seg {
  uint64_t off, len;
  uint8_t kind;
} seg;

/* One shadow: the mapping of one image for one operation. */
typedef struct shadow {
  uint32_t image;
  uint64_t bytes;  /* the buffer's */
  uint64_t lo, hi; /* declared bytes span [lo, hi); lo == hi: none */
  struct seg *seg; /* the declared bytes: disjoint, in order */
  uint32_t nseg;
  uint8_t *out; /* the first run's bytes over [lo, hi) */
  char *area;   /* the mapping */
  size_t area_size;
  char *base; /* where byte 0 of the buffer lies in it */
  char *real; /* the image */
} shadow;

/* One buffer parameter of the operation. */
typedef struct cparam {
  uint32_t k;  /* plan access index: the parameter (or access) */
  int out;     /* writes (out, inout) */
  uint32_t sh; /* its shadow */
  const uint64_t *iv;
  uint32_t niv;
  uint64_t lo, hi; /* its declared span */
} cparam;

typedef struct chk chk;
struct chk {
  rp_exec *x;
  const rp_plan *p;
  uint32_t node;
  const rp_plan_node *nd;
  shadow sh[RP_MAX_PARAMS];
  cparam par[RP_MAX_PARAMS];
  uint32_t nsh, npar;
  size_t page;
  void **scratch;
  rp__check_cache *cache;
  /* The canaries: every one CANARY_A (CAN_A), every one CANARY_B
   * (CAN_B), or (CAN_RANGE, bisecting) CANARY_B for the undeclared
   * accessible bytes und[blo, bhi) (shadow << 56 | offset, sorted) and
   * CANARY_A for the others. */
  int canaries;
  char *msg; /* inspect_range()'s report */
  size_t msgn;
  rp_status st;
  int (*gap_fn)(chk *, shadow *, char *, char *); /* each_gap()'s */
  uint64_t *und;
  size_t nund, blo, bhi;
};

enum { CAN_A, CAN_B, CAN_RANGE };

/* --- the fault handler, installed only around a body ------------------- */

static _Thread_local sigjmp_buf *fault_jmp;
static _Thread_local void *fault_addr;
static _Thread_local int fault_write;
static struct sigaction old_segv, old_bus;

static void on_fault(int sig, siginfo_t *si, void *uc) {
  if (!fault_jmp) { /* not ours: another thread's fault goes on as before */
    const struct sigaction *o = sig == SIGBUS ? &old_bus : &old_segv;
    if (o->sa_flags & SA_SIGINFO) {
      o->sa_sigaction(sig, si, uc);
      return;
    }
    if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
      o->sa_handler(sig);
      return;
    }
    signal(sig, SIG_DFL); /* the faulting access runs again and kills */
    return;
  }
  fault_addr = si->si_addr;
  fault_write = -1;
#if defined(__x86_64__) && defined(REG_ERR)
  fault_write = (((ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)uc;
#endif
  siglongjmp(*fault_jmp, 1);
}

/* --- shadows ----------------------------------------------------------- */

/* The mappings, one per plan image, kept from one operation to the next
 * (mapping and unmapping per operation costs page faults and TLB
 * shootdowns): between runs every page is inaccessible again. */
struct rp__check_cache {
  uint32_t n;
  char **area;
  size_t *size;
  /* Scratch per shadow of an operation (the first run's bytes), grown as
   * needed: big allocations per operation would be fresh mappings,
   * faulted in and unmapped each time. */
  uint8_t *out[RP_MAX_PARAMS];
  size_t cap[RP_MAX_PARAMS];
};

rp__check_cache *rp__check_cache_new(uint32_t nimage) {
  rp__check_cache *k = calloc(1, sizeof *k);
  if (!k)
    return NULL;
  k->n = nimage;
  k->area = calloc(nimage ? nimage : 1, sizeof *k->area);
  k->size = calloc(nimage ? nimage : 1, sizeof *k->size);
  if (!k->area || !k->size) {
    rp__check_cache_free(k);
    return NULL;
  }
  return k;
}

void rp__check_cache_free(rp__check_cache *k) {
  if (!k)
    return;
  for (uint32_t i = 0; k->area && i < k->n; i++)
    if (k->area[i])
      munmap(k->area[i], k->size[i]);
  for (int i = 0; i < RP_MAX_PARAMS; i++)
    free(k->out[i]);
  free(k->area);
  free(k->size);
  free(k);
}

/* The pages [*a, *b) of shadow s that bytes [o, o + len) lie on. */
static void pages_of(const chk *c, const shadow *s, uint64_t o, uint64_t len,
                     char **a, char **b) {
  /* Pointer arithmetic, not integers cast back to pointers. */
  char *lo = s->base + o, *hi = s->base + o + len;
  uintptr_t in_lo = (uintptr_t)lo & (c->page - 1);
  uintptr_t in_hi = (uintptr_t)hi & (c->page - 1);
  *a = lo - in_lo;
  *b = in_hi ? hi + (c->page - in_hi) : hi;
}

/* Calls fn on each range of pages holding declared bytes of s, merged,
 * as [a, b) addresses. */
static int each_range(chk *c, uint32_t si,
                      int (*fn)(chk *, shadow *, char *, char *)) {
  shadow *s = &c->sh[si];
  char *ra = NULL, *rb = NULL;
  for (uint32_t i = 0; i < s->nseg; i++) {
    char *a, *b;
    pages_of(c, s, s->seg[i].off, s->seg[i].len, &a, &b);
    if (ra && a <= rb) { /* overlaps or touches: merge */
      rb = b > rb ? b : rb;
      continue;
    }
    if (ra && fn(c, s, ra, rb))
      return -1;
    ra = a;
    rb = b;
  }
  return ra ? fn(c, s, ra, rb) : 0;
}

/* each_range() callback: c->gap_fn on the undeclared bytes of [a, b). */
static int gaps_of(chk *c, shadow *s, char *a, char *b) {
  int64_t A = (int64_t)(a - s->base), B = (int64_t)(b - s->base), p = A;
  uint32_t lo = 0, hi = s->nseg;
  while (lo < hi) { /* the first segment ending past A */
    uint32_t mid = lo + (hi - lo) / 2;
    if ((int64_t)(s->seg[mid].off + s->seg[mid].len) <= A)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (uint32_t i = lo; i < s->nseg && (int64_t)s->seg[i].off < B; i++) {
    int64_t o = (int64_t)s->seg[i].off;
    if (o > p && c->gap_fn(c, s, s->base + p, s->base + o))
      return -1;
    if (o + (int64_t)s->seg[i].len > p)
      p = o + (int64_t)s->seg[i].len;
  }
  return p < B ? c->gap_fn(c, s, s->base + p, b) : 0;
}

/* Calls fn on each run of undeclared bytes on the accessible pages of
 * shadow si. */
static int each_gap(chk *c, uint32_t si,
                    int (*fn)(chk *, shadow *, char *, char *)) {
  c->gap_fn = fn;
  return each_range(c, si, gaps_of);
}

static int open_range(chk *c, shadow *s, char *a, char *b) {
  (void)c, (void)s;
  return mprotect(a, (size_t)(b - a), PROT_READ | PROT_WRITE);
}

static int shut_range(chk *c, shadow *s, char *a, char *b) {
  (void)c, (void)s;
  return mprotect(a, (size_t)(b - a), PROT_NONE);
}

/* Every page of shadow si inaccessible again (its mapping stays). */
static void close_shadow(chk *c, uint32_t si) {
  if (c->sh[si].base)
    each_range(c, si, shut_range);
  c->sh[si].base = NULL;
}

/* The canary of byte `off` of shadow si. */
static uint8_t canary(const chk *c, uint32_t si, uint64_t off) {
  if (c->canaries != CAN_RANGE)
    return c->canaries == CAN_B ? CANARY_B : CANARY_A;
  uint64_t key = (uint64_t)si << 56 | off;
  size_t lo = c->blo, hi = c->bhi;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->und[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->bhi && c->und[lo] == key ? CANARY_B : CANARY_A;
}

static int fill_range(chk *c, shadow *s, char *a, char *b) {
  uint32_t si = (uint32_t)(s - c->sh);
  if (c->canaries != CAN_RANGE) {
    memset(a, c->canaries == CAN_B ? CANARY_B : CANARY_A, (size_t)(b - a));
    return 0;
  }
  for (char *q = a; q < b; q++)
    *q = (char)canary(c, si, (uint64_t)(q - s->base));
  return 0;
}

/* Maps shadow si in layout `lay` and fills it: canaries, then the image's
 * declared bytes. */
static rp_status map_shadow(chk *c, uint32_t si, int lay) {
  shadow *s = &c->sh[si];
  size_t P = c->page;
  close_shadow(c, si);
  s->area_size = 3 * P + (s->bytes + P - 1) / P * P;
  rp__check_cache *k = c->cache;
  if (!k->area[s->image]) {
    void *m = mmap(NULL, s->area_size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      return RP_ENOMEM;
    k->area[s->image] = m;
    k->size[s->image] = s->area_size;
  }
  s->area = k->area[s->image];
  uint64_t at = lay == END_AT_PAGE ? s->hi : s->lo;
  s->base = s->area + P + (P - at % P) % P;
  if (each_range(c, si, open_range) || each_gap(c, si, fill_range))
    return RP_ENOMEM;
  for (uint32_t q = 0; q < c->npar; q++)
    for (uint32_t i = 0; c->par[q].sh == si && i < c->par[q].niv; i++) {
      uint64_t o = c->par[q].iv[2 * i], n = c->par[q].iv[2 * i + 1];
      memcpy(s->base + o, s->real + o, n);
    }
  return RP_OK;
}

/* --- running the body -------------------------------------------------- */

/* A body and its arguments. */
typedef struct call {
  rp_cpu_fn cpu;
  rp_kargs ka;
  rp_host_fn fn;
  void *user;
  void **ptrs;
} call;

static void call_body(const call *b) {
  if (b->cpu) {
    uint64_t lo[3] = {0, 0, 0};
    b->cpu(&b->ka, lo, b->ka.n);
  } else {
    b->fn(b->user, b->ptrs);
  }
}

/* Calls the body with the fault handler installed; 1 when it faulted
 * (fault_addr, fault_write say where). */
static int guarded(const call *b) {
  struct sigaction sa;
  sigjmp_buf jb;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
  volatile int faulted = 0;
  if (sigsetjmp(jb, 1) == 0) {
    fault_jmp = &jb;
    call_body(b);
  } else {
    faulted = 1;
  }
  fault_jmp = NULL;
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  return faulted;
}

/* Runs the body over the shadows; 1 when it faulted. */
static int run_body(chk *c) {
  const rp_plan_node *nd = c->nd;
  call b;
  memset(&b, 0, sizeof b);
  if (nd->type == RP_OP_KERNEL) {
    rp_node_info ni;
    rp_node_info_get(c->p->graph, nd->op, &ni);
    b.cpu = ni.kernel->cpu;
    b.ka = *rp_exec_args(c->x, nd->op);
  } else {
    rp_node_host_fn(c->p->graph, nd->op, &b.fn, &b.user);
    b.ptrs = c->scratch;
  }
  for (uint32_t q = 0; q < c->npar; q++) {
    char *base = c->sh[c->par[q].sh].base;
    if (b.cpu)
      b.ka.a[c->par[q].k].p = base;
    else
      c->scratch[c->par[q].k] = base;
  }
  return guarded(&b);
}

/* --- what to say ------------------------------------------------------- */

/* "parameter 1 'dst'" or "access 1". */
static void param_name(const chk *c, uint32_t k, char *b, size_t n) {
  rp_node_info ni;
  rp_node_info_get(c->p->graph, c->nd->op, &ni);
  if (c->nd->type == RP_OP_KERNEL && ni.kernel && k < ni.kernel->nparams)
    snprintf(b, n, "parameter %u '%s'", k,
             ni.kernel->params[k].name ? ni.kernel->params[k].name : "?");
  else
    snprintf(b, n, "access %u", k);
}

/* Its region as the program gave it: "box [1, 5) x [1, 63) (elements)" or
 * "bytes [0, 64)". */
static void region_text(const chk *c, uint32_t k, char *b, size_t n) {
  const rp_graph *g = c->p->graph;
  rp_node_info ni;
  rp_node_info_get(g, c->nd->op, &ni);
  unsigned ai = k;
  if (c->nd->type == RP_OP_KERNEL && ni.kernel) {
    ai = 0;
    for (unsigned p = 0; p < k && p < ni.kernel->nparams; p++)
      ai += ni.kernel->params[p].mode != RP_SCALAR;
  }
  rp_access_info acc;
  if (rp_node_access(g, c->nd->op, ai, &acc) != RP_OK) {
    snprintf(b, n, "?");
    return;
  }
  if (acc.region.kind == RP_REGION_BOX) {
    int w = snprintf(b, n, "box ");
    for (unsigned d = 0; d < acc.region.ndims && w > 0 && (size_t)w < n; d++)
      w += snprintf(b + w, n - (size_t)w, "%s[%llu, %llu)", d ? " x " : "",
                    (unsigned long long)acc.region.lo[d],
                    (unsigned long long)acc.region.hi[d]);
    if (w > 0 && (size_t)w < n)
      snprintf(b + w, n - (size_t)w, " (elements)");
  } else {
    snprintf(b, n, "bytes [%llu, %llu)", (unsigned long long)acc.region.offset,
             (unsigned long long)acc.region.offset +
                 (unsigned long long)acc.region.bytes);
  }
}

/* " (element 12)" or " (element [3, 4])" for byte off of buffer buf. */
static void element_text(const rp_graph *g, rp_buf buf, int64_t off, char *b,
                         size_t n) {
  rp_buffer_desc d;
  b[0] = 0;
  if (off < 0 || rp_buffer_info(g, buf, &d) != RP_OK ||
      (uint64_t)off >= d.bytes)
    return;
  uint64_t el = d.elem ? d.elem : 1, e = (uint64_t)off / el;
  if (d.ndims < 2) {
    if (el > 1)
      snprintf(b, n, " (element %llu)", (unsigned long long)e);
    return;
  }
  uint64_t idx[3];
  for (int k = (int)d.ndims - 1; k >= 0; k--) {
    idx[k] = e % d.dims[k];
    e /= d.dims[k];
  }
  if (d.ndims == 2)
    snprintf(b, n, " (element [%llu, %llu])", (unsigned long long)idx[0],
             (unsigned long long)idx[1]);
  else
    snprintf(b, n, " (element [%llu, %llu, %llu])", (unsigned long long)idx[0],
             (unsigned long long)idx[1], (unsigned long long)idx[2]);
}

/* The parameter of shadow si whose span is nearest to byte off. */
static uint32_t nearest(const chk *c, uint32_t si, int64_t off) {
  uint32_t best = RP_NONE;
  uint64_t bd = UINT64_MAX;
  for (uint32_t q = 0; q < c->npar; q++) {
    if (c->par[q].sh != si)
      continue;
    int64_t lo = (int64_t)c->par[q].lo, hi = (int64_t)c->par[q].hi;
    uint64_t d = off < lo    ? (uint64_t)(lo - off)
                 : off >= hi ? (uint64_t)(off - hi + 1)
                             : 0;
    if (d < bd) {
      bd = d;
      best = q;
    }
  }
  return best;
}

static rp_status report(chk *c, uint32_t si, int64_t off, const char *verb,
                        const char *why, const char *note, char *msg,
                        size_t n) {
  const rp_graph *g = c->p->graph;
  rp_node_info ni;
  rp_node_info_get(g, c->nd->op, &ni);
  uint32_t q = nearest(c, si, off);
  rp_buf buf = c->p->image[c->sh[si].image].buf;
  rp_buffer_desc d;
  rp_buffer_info(g, buf, &d);
  char pn[96] = "an access", rg[160] = "?", el[64];
  if (q != RP_NONE) {
    param_name(c, c->par[q].k, pn, sizeof pn);
    region_text(c, c->par[q].k, rg, sizeof rg);
  }
  element_text(g, buf, off, el, sizeof el);
  snprintf(
      msg, n,
      "checking mode: op %u \"%s\" (%s%s): %s %s byte %lld%s "
      "of buffer \"%s\" (%llu bytes), %s its region %s%s",
      c->nd->op, ni.name, c->nd->type == RP_OP_KERNEL ? "kernel " : "host task",
      c->nd->type == RP_OP_KERNEL && ni.kernel ? ni.kernel->name : "", pn, verb,
      (long long)off, el, d.name, (unsigned long long)d.bytes, why, rg, note);
  return RP_EACCESS;
}

/* The first byte of [p, e) of shadow si that is not its canary, or e. */
static char *not_canary(const chk *c, uint32_t si, char *p, char *e) {
  const char *base = c->sh[si].base;
  if (c->canaries == CAN_RANGE) {
    for (; p < e; p++)
      if ((uint8_t)*p != canary(c, si, (uint64_t)(p - base)))
        return p;
    return e;
  }
  uint8_t v = c->canaries == CAN_B ? CANARY_B : CANARY_A;
  uint64_t w = v * 0x0101010101010101ull, x;
  for (; p < e && ((uintptr_t)p & 7); p++)
    if ((uint8_t)*p != v)
      return p;
  for (; e - p >= 8; p += 8) {
    memcpy(&x, p, 8);
    if (x != w)
      break;
  }
  for (; p < e; p++)
    if ((uint8_t)*p != v)
      return p;
  return e;
}

/* each_gap(): the canaries of undeclared bytes [a, b); a report in c->st
 * and c->msg, and -1, at the first changed one. */
static int inspect_gap(chk *c, shadow *s, char *a, char *b) {
  uint32_t si = (uint32_t)(s - c->sh);
  char *q = not_canary(c, si, a, b);
  if (q == b)
    return 0;
  c->st = report(c, si, (int64_t)(q - s->base), "writes", "outside", "", c->msg,
                 c->msgn);
  return -1;
}

/* The read-only bytes of shadow si as the image has them. */
static rp_status inspect_in(chk *c, uint32_t si) {
  shadow *s = &c->sh[si];
  for (uint32_t i = 0; i < s->nseg; i++) {
    const seg *g = &s->seg[i];
    if (g->kind != 1 || !memcmp(s->base + g->off, s->real + g->off, g->len))
      continue;
    uint64_t o = g->off;
    while (s->base[o] == s->real[o])
      o++;
    return report(c, si, (int64_t)o, "writes", "inside",
                  ", which it declares in (read only)", c->msg, c->msgn);
  }
  return RP_OK;
}

/* After a run: a fault, a changed canary, a written `in` byte. */
static rp_status inspect(chk *c, int faulted, char *msg, size_t n) {
  if (faulted) {
    for (uint32_t si = 0; si < c->nsh; si++) {
      shadow *s = &c->sh[si];
      char *f = fault_addr;
      if (f < s->area || f >= s->area + s->area_size)
        continue;
      return report(c, si, (int64_t)(f - s->base),
                    fault_write > 0    ? "writes"
                    : fault_write == 0 ? "reads"
                                       : "touches",
                    "outside", "", msg, n);
    }
    snprintf(msg, n,
             "checking mode: op %u: the body faulted at %p, in no "
             "buffer it names",
             c->nd->op, fault_addr);
    return RP_EACCESS;
  }
  c->msg = msg;
  c->msgn = n;
  c->st = RP_OK;
  for (uint32_t si = 0; si < c->nsh && c->st == RP_OK; si++)
    if (each_gap(c, si, inspect_gap) == 0)
      c->st = inspect_in(c, si);
  return c->st;
}

/* Do the written bytes equal the first run's? */
static int same_out(const chk *c) {
  for (uint32_t q = 0; q < c->npar; q++) {
    const shadow *s = &c->sh[c->par[q].sh];
    for (uint32_t i = 0; c->par[q].out && i < c->par[q].niv; i++) {
      uint64_t o = c->par[q].iv[2 * i], len = c->par[q].iv[2 * i + 1];
      if (memcmp(s->base + o, s->out + (o - s->lo), len))
        return 0;
    }
  }
  return 1;
}

/* Keeps the written bytes of this run (s->out, indexed from s->lo). */
static void keep_out(chk *c) {
  for (uint32_t si = 0; si < c->nsh; si++) {
    shadow *s = &c->sh[si];
    for (uint32_t i = 0; i < s->nseg; i++)
      if (s->seg[i].kind == 2)
        memcpy(s->out + (s->seg[i].off - s->lo), s->base + s->seg[i].off,
               s->seg[i].len);
  }
}

/* Maps every shadow in layout lay and runs; its inspection's status. */
static rp_status run_in(chk *c, int lay, char *msg, size_t n) {
  for (uint32_t si = 0; si < c->nsh; si++)
    if (map_shadow(c, si, lay) != RP_OK)
      return RP_ENOMEM;
  return inspect(c, run_body(c), msg, n);
}

/* each_gap(): appends the bytes of [a, b) to c->und (c->blo: its
 * capacity, while listing). */
static int list_gap(chk *c, shadow *s, char *a, char *b) {
  uint32_t si = (uint32_t)(s - c->sh);
  for (char *p = a; p < b; p++) {
    int64_t off = (int64_t)(p - s->base);
    if (off < 0)
      continue;
    if (c->nund == c->blo) {
      size_t nc = c->blo ? 2 * c->blo : 4096;
      uint64_t *u = realloc(c->und, nc * sizeof *u);
      if (!u)
        return -1;
      c->und = u;
      c->blo = nc;
    }
    c->und[c->nund++] = (uint64_t)si << 56 | (uint64_t)off;
  }
  return 0;
}

/* The undeclared bytes of the accessible pages (the current layout), in
 * order (shadows in order, each's gaps in order: und is sorted). */
static rp_status list_undeclared(chk *c) {
  c->blo = 0;
  for (uint32_t si = 0; si < c->nsh; si++)
    if (each_gap(c, si, list_gap))
      return RP_ENOMEM;
  c->blo = 0;
  return RP_OK;
}

/* The results differ between the layouts: some undeclared byte was read.
 * Bisect the canaries (in the second layout) down to one byte. */
static rp_status find_read(chk *c, char *msg, size_t n) {
  rp_status s;
  if ((s = list_undeclared(c)) != RP_OK)
    return s;
  c->canaries = CAN_A;
  if ((s = run_in(c, START_AT_PAGE, msg, n)) != RP_OK)
    return s;
  keep_out(c); /* the reference: every canary A */
  c->canaries = CAN_RANGE;
  size_t lo = 0, hi = c->nund;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    c->blo = lo;
    c->bhi = mid;
    if ((s = run_in(c, START_AT_PAGE, msg, n)) != RP_OK)
      return s;
    if (same_out(c))
      lo = mid;
    else
      hi = mid;
  }
  if (hi > lo) { /* confirm the one byte */
    c->blo = lo;
    c->bhi = hi;
    if ((s = run_in(c, START_AT_PAGE, msg, n)) != RP_OK)
      return s;
    if (!same_out(c)) {
      uint32_t si = (uint32_t)(c->und[lo] >> 56);
      int64_t off = (int64_t)(c->und[lo] & ((1ull << 56) - 1));
      return report(c, si, off, "reads", "outside",
                    " (found by its effect on the results)", msg, n);
    }
  }
  snprintf(msg, n,
           "checking mode: op %u: its results depend on bytes "
           "outside its declared regions (not located: several together)",
           c->nd->op);
  return RP_EACCESS;
}

/* An end of a run of declared bytes: +1 / -1 to the readers or the
 * writers from pos on. */
typedef struct ev {
  uint64_t pos;
  int din, dout;
} ev;

static int ev_cmp(const void *x, const void *y) {
  const ev *a = x, *b = y;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The declared bytes of shadow si as disjoint segments in order, written
 * where some parameter writes them. */
static rp_status build_segs(chk *c, uint32_t si) {
  shadow *s = &c->sh[si];
  uint32_t n = 0;
  for (uint32_t q = 0; q < c->npar; q++)
    n += c->par[q].sh == si ? c->par[q].niv : 0;
  ev *e = malloc(sizeof *e * (2 * (size_t)n + 1));
  s->seg = malloc(sizeof *s->seg * (2 * (size_t)n + 1));
  if (!e || !s->seg) {
    free(e);
    return RP_ENOMEM;
  }
  uint32_t ne = 0;
  for (uint32_t q = 0; q < c->npar; q++)
    for (uint32_t i = 0; c->par[q].sh == si && i < c->par[q].niv; i++) {
      uint64_t o = c->par[q].iv[2 * i], len = c->par[q].iv[2 * i + 1];
      if (!len)
        continue;
      int w = c->par[q].out;
      e[ne++] = (ev){o, !w, w};
      e[ne++] = (ev){o + len, -!w, -w};
    }
  qsort(e, ne, sizeof *e, ev_cmp);
  int in = 0, out = 0;
  uint64_t prev = 0;
  s->nseg = 0;
  for (uint32_t i = 0; i < ne;) {
    uint64_t pos = e[i].pos;
    if ((in || out) && pos > prev) {
      uint8_t kind = out ? 2 : 1;
      seg *l = s->nseg ? &s->seg[s->nseg - 1] : NULL;
      if (l && l->kind == kind && l->off + l->len == prev)
        l->len += pos - prev;
      else
        s->seg[s->nseg++] = (seg){prev, pos - prev, kind};
    }
    for (; i < ne && e[i].pos == pos; i++) {
      in += e[i].din;
      out += e[i].dout;
    }
    prev = pos;
  }
  free(e);
  return RP_OK;
}

/* Sets up the shadows and parameters of plan node `node`. */
static rp_status setup(chk *c, rp_image_addr_fn addr, void *ctx) {
  const rp_plan_access *a = c->p->acc + c->nd->acc0;
  for (uint32_t k = 0; k < c->nd->nacc && k < RP_MAX_PARAMS; k++) {
    if (a[k].image == RP_NONE)
      continue;
    uint32_t si = 0;
    while (si < c->nsh && c->sh[si].image != a[k].image)
      si++;
    if (si == c->nsh) {
      shadow *s = &c->sh[c->nsh++];
      memset(s, 0, sizeof *s);
      s->image = a[k].image;
      s->bytes = c->p->image[a[k].image].bytes;
      s->real = addr(ctx, a[k].image);
      s->lo = UINT64_MAX;
      s->hi = 0;
    }
    cparam *q = &c->par[c->npar++];
    q->k = k;
    q->sh = si;
    q->iv = c->p->iv + 2 * (uint64_t)a[k].iv0;
    q->niv = a[k].niv;
    q->lo = a[k].bytes ? a[k].offset : 0;
    q->hi = a[k].bytes ? a[k].offset + a[k].bytes : 0;
    shadow *s = &c->sh[si];
    if (a[k].bytes) {
      s->lo = q->lo < s->lo ? q->lo : s->lo;
      s->hi = q->hi > s->hi ? q->hi : s->hi;
    }
  }
  for (uint32_t q = 0; q < c->npar; q++)
    c->par[q].out = (a[c->par[q].k].mode & RP_OUT) != 0;
  for (uint32_t si = 0; si < c->nsh; si++) {
    shadow *s = &c->sh[si];
    if (s->lo > s->hi)
      s->lo = s->hi = 0;
    size_t span = (size_t)(s->hi - s->lo);
    rp__check_cache *k = c->cache;
    if (k->cap[si] < span + 1) {
      free(k->out[si]);
      k->cap[si] = 0;
      if (!(k->out[si] = malloc(span + 1)))
        return RP_ENOMEM;
      k->cap[si] = span + 1;
    }
    s->out = k->out[si];
    if (build_segs(c, si) != RP_OK)
      return RP_ENOMEM;
  }
  return RP_OK;
}

rp_status rp__run_checked(rp_exec *x, uint32_t node, rp_image_addr_fn addr,
                          void *ctx, void **scratch, rp__check_cache *cache,
                          char *msg, size_t n) {
  const rp_plan *p = rp_exec_plan(x);
  if (!p || node >= p->nnode || !addr)
    return RP_EINVAL;
  const rp_plan_node *nd = &p->node[node];
  if (nd->type != RP_OP_KERNEL && nd->type != RP_OP_HOST)
    return rp_plan_run_on_host(x, node, addr, ctx, scratch);
  rp_node_info ni;
  rp_host_fn fn = NULL;
  void *user;
  rp_node_info_get(p->graph, nd->op, &ni);
  if (nd->type == RP_OP_KERNEL
          ? !ni.kernel || !ni.kernel->cpu
          : rp_node_host_fn(p->graph, nd->op, &fn, &user) != RP_OK || !fn)
    return RP_ENOKERNEL;
  if (nd->nacc > RP_MAX_PARAMS || (nd->type == RP_OP_HOST && !scratch) ||
      !cache || cache->n != p->nimage)
    return rp_plan_run_on_host(x, node, addr, ctx, scratch);
  chk *c = calloc(1, sizeof *c);
  if (!c)
    return RP_ENOMEM;
  c->x = x;
  c->p = p;
  c->node = node;
  c->nd = nd;
  c->page = (size_t)sysconf(_SC_PAGESIZE);
  c->scratch = scratch;
  c->cache = cache;
  rp_status s = setup(c, addr, ctx);
  char fm[256];
  int failed = 0;
  /* Run 1: the first byte past the declared ones starts a closed page. */
  if (s == RP_OK && (s = run_in(c, END_AT_PAGE, msg, n)) == RP_OK) {
    keep_out(c);
    failed = rp_task_take_failure(fm, sizeof fm);
    if (failed) /* given back, for the replay to report */
      rp_task_fail(failed, "%s", fm);
  }
  /* Run 2: the byte before them ends one; the other canary. */
  if (s == RP_OK && !failed) {
    c->canaries = CAN_B;
    if ((s = run_in(c, START_AT_PAGE, msg, n)) == RP_OK && !same_out(c))
      s = find_read(c, msg, n);
  }
  for (uint32_t q = 0; s == RP_OK && q < c->npar; q++) { /* run 1's */
    shadow *sh = &c->sh[c->par[q].sh];
    for (uint32_t i = 0; c->par[q].out && i < c->par[q].niv; i++) {
      uint64_t o = c->par[q].iv[2 * i], len = c->par[q].iv[2 * i + 1];
      memcpy(sh->real + o, sh->out + (o - sh->lo), len);
    }
  }
  for (uint32_t si = 0; si < c->nsh; si++) {
    close_shadow(c, si);
    free(c->sh[si].seg);
  }
  free(c->und);
  free(c);
  if (s == RP_ENOMEM)
    snprintf(msg, n, "checking mode: out of memory for op %u's shadows",
             nd->op);
  return s;
}
