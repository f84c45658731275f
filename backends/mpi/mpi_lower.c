/* The mpi backend's lowering: one rank's part of the plan as a task list
 * for the OpenMP backend's engine.
 *
 * Tasks: the post of the replay's receives (one MPI_Irecv per piece this
 * rank receives, into the piece's staging buffer), then per node of the
 * part: the node itself (a kernel, a host task, a copy within the rank),
 * or one task per piece of a copy with an end here: the local piece, a
 * send (wait for the piece's send of the replay before, pack, MPI_Isend),
 * a receive (wait for the posted MPI_Irecv, unpack). A stencil kernel
 * whose reads need received rows is several tasks: its slices, interior
 * first (mpi_cut.c).
 *
 * Memory: as the starpu lowering keeps them (rp__sp_alias), the spaces of
 * a buffer on this rank are one memory, the user's array, where the
 * coherence model says nothing can tell; a copy within it moves nothing.
 *
 * Order: as the starpu lowering orders its tasks (rp__sp_order): two tasks
 * whose byte spans of one memory of the rank overlap, with a write among
 * them, in program order; an order between ranks is carried by the
 * message that brings the data. The post precedes every receive.
 *
 * The list: not program order, which would wait for a neighbour's halo
 * before sending it ours when the recorder put the copy towards us first:
 * rank k would send to rank k + 1 only after rank k - 1's message came, a
 * chain through the ranks (issue 35). Instead a topological order that
 * takes, of the tasks whose predecessors are all placed, the first send
 * in program order, else the first task that is not a receive, and a
 * receive only when there is neither: every send, and every task that
 * needs no message, goes before a wait, and a send as soon as what it
 * reads is written (program order put a rank's send to the next rank
 * after its own stencil's interior, recorded before the neighbour's
 * stencil that the send's copy precedes: the neighbour's boundary waited
 * for our interior; tests/backends/mpi_predict.c). One thread runs the list in that order; the stealing engine (two
 * threads or more) as the dependencies allow, a receive also waiting for
 * every task before it in the list. Either way a replay cannot deadlock:
 * a rank waits in a receive only when every task it could run without
 * one has run, so the first receive in program order that is still
 * waited for has its send posted (whatever that send waited for comes
 * earlier in program order and is done).
 *
 * Replays follow one another (the engine starts replay e + 1 when e is
 * done), so a receive posted at the start of a replay lands after the
 * previous unpack of its buffer; the messages of one piece, one per
 * replay, are matched in order (same source, tag and communicator). Tags:
 * the piece's place among the pieces from its source to its destination,
 * in node order, which both ends enumerate alike (a node has at most one
 * piece per pair of ranks). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mpi_internal.h"

/* ---- bodies of the tasks ---- */

static void local_body(void *arg) {
  const mmsg *g = arg;
  char *const *img = (char *const *)g->m->st->img;
  for (uint32_t k = 0; k < g->nr; k++)
    memcpy(img[g->dst] + g->runs[2 * k], img[g->src] + g->runs[2 * k],
           g->runs[2 * k + 1]);
}

static void send_body(void *arg) {
  mmsg *g = arg;
  if (g->req != MPI_REQUEST_NULL) /* the replay before's, same buffer */
    MPI_Wait(&g->req, MPI_STATUS_IGNORE);
  const char *src = (const char *)g->m->st->img[g->src];
  char *q = g->stage;
  for (uint32_t k = 0; k < g->nr; k++) {
    memcpy(q, src + g->runs[2 * k], g->runs[2 * k + 1]);
    q += g->runs[2 * k + 1];
  }
  MPI_Isend(g->stage, g->bytes, MPI_BYTE, g->peer, g->tag, g->m->comm, &g->req);
}

static void post_body(void *arg) {
  mstate *m = arg;
  for (uint32_t k = 0; k < m->nrecv; k++) {
    mmsg *g = &m->msg[m->recv[k]];
    MPI_Irecv(g->stage, g->bytes, MPI_BYTE, g->peer, g->tag, m->comm, &g->req);
  }
}

static void recv_body(void *arg) {
  mmsg *g = arg;
  MPI_Wait(&g->req, MPI_STATUS_IGNORE);
  char *dst = (char *)g->m->st->img[g->dst];
  const char *q = g->stage;
  for (uint32_t k = 0; k < g->nr; k++) {
    memcpy(dst + g->runs[2 * k], q, g->runs[2 * k + 1]);
    q += g->runs[2 * k + 1];
  }
}

/* ---- the list ---- */

typedef struct edges {
  uint32_t *e; /* pairs (from, to) */
  size_t n, cap;
} edges;

static int add_edge(edges *E, uint32_t from, uint32_t to) {
  if (E->n == E->cap) {
    size_t c = E->cap ? 2 * E->cap : 256;
    uint32_t *t = realloc(E->e, 2 * c * sizeof *t);
    if (!t)
      return -1;
    E->e = t;
    E->cap = c;
  }
  E->e[2 * E->n] = from;
  E->e[2 * E->n + 1] = to;
  E->n++;
  return 0;
}

/* A staging buffer of n bytes, its pages faulted in now (at rp_exec_create,
 * not in the first replay: part of the set-up either way, but a fault per
 * page inside a receive that MPI copies into costs more); a large one on
 * huge pages where the kernel gives them on request (a fault per 2 MiB;
 * issue 35: on the 2-core VM the first replay of heat 4096 replicated
 * took 4.8 s in faults against 0.85 s for the next ones). */
static char *stage_alloc(uint64_t n) {
  enum { HUGE = 2u << 20 };
  size_t len = n ? (size_t)n : 1;
  void *p = NULL;
  if (len < 2 * (size_t)HUGE)
    p = malloc(len);
  else if (!posix_memalign(&p, HUGE, (len + HUGE - 1) / HUGE * HUGE)) {
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (len + HUGE - 1) / HUGE * HUGE, MADV_HUGEPAGE);
#endif
  }
  /* a write per page faults it in (its bytes do not matter: packed
   * before each send, received before each unpack) */
  for (size_t k = 0; p && k < len; k += 4096)
    ((char *)p)[k] = 0;
  return p;
}

/* The pieces' messages: staging buffers, peers, tags. */
static rp_status build_msgs(mstate *m) {
  const sp_part *pt = &m->part;
  const rp_plan *p = m->p;
  int *tag_to = calloc((size_t)m->nranks, sizeof *tag_to);
  int *tag_from = calloc((size_t)m->nranks, sizeof *tag_from);
  m->msg = calloc((size_t)pt->npiece + 1, sizeof *m->msg);
  m->recv = malloc(((size_t)pt->npiece + 1) * sizeof *m->recv);
  m->send = malloc(((size_t)pt->npiece + 1) * sizeof *m->send);
  m->sreq = malloc(((size_t)pt->npiece + 1) * sizeof *m->sreq);
  if (!tag_to || !tag_from || !m->msg || !m->recv || !m->send || !m->sreq) {
    free(tag_to);
    free(tag_from);
    return RP_ENOMEM;
  }
  int *ub, flag = 0, tag_ub = 32767;
  MPI_Comm_get_attr(m->comm, MPI_TAG_UB, &ub, &flag);
  if (flag)
    tag_ub = *ub;
  rp_status rc = RP_OK;
  for (uint32_t k = 0; k < pt->npiece && rc == RP_OK; k++) {
    const sp_piece *pc = &pt->piece[k];
    const rp_plan_access *a = p->acc + p->node[pc->v].acc0;
    mmsg *g = &m->msg[k];
    *g = (mmsg){.m = m,
                .src = a[0].image,
                .dst = a[1].image,
                .runs = pt->runs + 2 * (uint64_t)pc->r0,
                .nr = pc->nr,
                .req = MPI_REQUEST_NULL};
    if (pc->src == pc->dst)
      continue; /* the local piece */
    if (pc->bytes > INT_MAX) {
      rp_exec_set_error(m->x,
                        "mpi: copy node %u moves %llu bytes between ranks "
                        "%d and %d in one message (at most %d)",
                        pc->v, (unsigned long long)pc->bytes, pc->src, pc->dst,
                        INT_MAX);
      rc = RP_ENOTSUP;
      break;
    }
    int out = pc->src == m->rank;
    g->peer = out ? pc->dst : pc->src;
    g->tag = out ? tag_to[g->peer]++ : tag_from[g->peer]++;
    g->bytes = (int)pc->bytes;
    if (g->tag > tag_ub) {
      rp_exec_set_error(m->x,
                        "mpi: more than %d messages between two ranks "
                        "in one replay (MPI_TAG_UB)",
                        tag_ub);
      rc = RP_ENOTSUP;
      break;
    }
    if (!(g->stage = stage_alloc(pc->bytes))) {
      rc = RP_ENOMEM;
      break;
    }
    if (out)
      m->send[m->nsend++] = k;
    else
      m->recv[m->nrecv++] = k;
  }
  free(tag_to);
  free(tag_from);
  return rc;
}

/* The tasks in list order: the kind, plan node and piece of each. */
static rp_status build_list(mstate *m, uint32_t *pieceof) {
  const sp_part *pt = &m->part;
  uint32_t n = m->nrecv ? 1 : 0;
  for (uint32_t k = 0, pc = 0; k < pt->nnode; k++) {
    uint32_t v = pt->node[k], np = 0;
    while (pc < pt->npiece && pt->piece[pc].v == v) {
      pc++;
      np++;
    }
    n += np ? np : m->cutn[k] ? m->cutn[k] : 1;
  }
  m->kind = malloc((size_t)n + 1);
  m->node = malloc(((size_t)n + 1) * sizeof *m->node);
  if (!m->kind || !m->node)
    return RP_ENOMEM;
  uint32_t i = 0;
  if (m->nrecv) {
    m->kind[i] = MI_POST;
    pieceof[i] = RP_NONE;
    m->node[i++] = RP_NONE;
  }
  for (uint32_t k = 0, pc = 0; k < pt->nnode; k++) {
    uint32_t v = pt->node[k], pc0 = pc;
    while (pc < pt->npiece && pt->piece[pc].v == v)
      pc++;
    for (uint32_t c = 0; pc == pc0 && c < m->cutn[k]; c++) {
      m->kind[i] = MI_PART; /* a slice: its chunk in pieceof */
      pieceof[i] = m->cut0[k] + c;
      m->node[i++] = v;
    }
    if (pc == pc0 && !m->cutn[k]) {
      m->kind[i] = MI_RUN;
      pieceof[i] = RP_NONE;
      m->node[i++] = v;
    }
    for (int pass = 0; pass < 2; pass++) /* local pieces and sends first */
      for (uint32_t q = pc0; q < pc; q++) {
        const sp_piece *pp = &pt->piece[q];
        int in = pp->dst == m->rank && pp->src != m->rank;
        if (in != pass)
          continue;
        m->kind[i] = in ? MI_RECV : pp->src == pp->dst ? MI_LOCAL : MI_SEND;
        pieceof[i] = q;
        m->node[i++] = v;
      }
  }
  m->nitem = i;
  return RP_OK;
}

/* The order between the tasks (see the head of this file). */
static rp_status build_edges(mstate *m, const uint32_t *pieceof, edges *E) {
  uint32_t n = m->nitem, *dep = NULL, maxdep;
  sp_task_ref *t = calloc((size_t)n + 1, sizeof *t);
  uint32_t *d0 = calloc((size_t)n + 1, sizeof *d0);
  uint32_t *dn = calloc((size_t)n + 1, sizeof *dn);
  rp_status rc = RP_ENOMEM;
  if (t && d0 && dn) {
    static const uint8_t touch[] = {
        [MI_RUN] = SP_T_NODE,   [MI_LOCAL] = SP_T_BOTH, [MI_SEND] = SP_T_READ,
        [MI_RECV] = SP_T_WRITE, [MI_POST] = SP_T_NONE,  [MI_PART] = SP_T_NODE};
    for (uint32_t i = 0; i < n; i++)
      t[i] = (sp_task_ref){m->node[i], pieceof[i], touch[m->kind[i]],
                           m->kind[i] == MI_PART ? m->chunk[pieceof[i]].span
                                                 : NULL};
    rc = rp__sp_order(m->p, &m->part, t, n, 0, 0, &dep, d0, dn, &maxdep);
  }
  for (uint32_t i = 0; rc == RP_OK && i < n; i++)
    for (uint32_t k = d0[i]; k < d0[i] + dn[i] && rc == RP_OK; k++)
      if (add_edge(E, dep[k], i))
        rc = RP_ENOMEM;
  free(t);
  free(d0);
  free(dn);
  free(dep);
  for (uint32_t i = 0; rc == RP_OK && i < n; i++)
    if (m->kind[i] == MI_RECV && add_edge(E, 0, i)) /* after the post */
      rc = RP_ENOMEM;
  return rc;
}

/* With several threads: a receive after every task before it in the list
 * (see the head of this file). */
static rp_status barrier_edges(mstate *m, edges *E) {
  uint32_t last_recv = RP_NONE;
  for (uint32_t i = 0; m->st->nth > 1 && i < m->nitem; i++) {
    if (m->kind[i] != MI_RECV)
      continue;
    for (uint32_t j = last_recv == RP_NONE ? 0 : last_recv; j < i; j++)
      if (add_edge(E, j, i))
        return RP_ENOMEM;
    last_recv = i;
  }
  return RP_OK;
}

/* A binary min-heap of task numbers. */
typedef struct heap {
  uint32_t *a;
  uint32_t n;
} heap;

static void heap_push(heap *h, uint32_t v) {
  uint32_t i = h->n++;
  for (; i && h->a[(i - 1) / 2] > v; i = (i - 1) / 2)
    h->a[i] = h->a[(i - 1) / 2];
  h->a[i] = v;
}

static uint32_t heap_pop(heap *h) {
  uint32_t top = h->a[0], v = h->a[--h->n], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->a[c + 1] < h->a[c])
      c++;
    if (h->a[c] >= v)
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  h->a[i] = v;
  return top;
}

/* The list's order (see the head of this file): a topological order of
 * edges E taking, of the tasks whose predecessors are all placed, the
 * first send in program order, else the first task that is not a
 * receive, a receive only when there is neither; the list and E
 * renumbered to it. */
static rp_status lazy_order(mstate *m, uint32_t *pieceof, edges *E) {
  uint32_t n = m->nitem;
  uint32_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
  uint32_t *s0 = calloc((size_t)n + 2, sizeof *s0);
  uint32_t *succ = malloc((E->n + 1) * sizeof *succ);
  uint32_t *perm = malloc(((size_t)n + 1) * sizeof *perm);
  uint32_t *inv = malloc(((size_t)n + 1) * sizeof *inv);
  heap work = {malloc(((size_t)n + 1) * sizeof(uint32_t)), 0};
  heap recv = {malloc(((size_t)n + 1) * sizeof(uint32_t)), 0};
  heap send = {malloc(((size_t)n + 1) * sizeof(uint32_t)), 0};
  uint8_t *kind = malloc((size_t)n + 1);
  rp_status rc = RP_ENOMEM;
  if (!indeg || !s0 || !succ || !perm || !inv || !work.a || !recv.a ||
      !send.a || !kind)
    goto out;
  for (size_t k = 0; k < E->n; k++) {
    s0[E->e[2 * k] + 2]++;
    indeg[E->e[2 * k + 1]]++;
  }
  for (uint32_t i = 0; i < n; i++)
    s0[i + 2] += s0[i + 1];
  for (size_t k = 0; k < E->n; k++)
    succ[s0[E->e[2 * k] + 1]++] = E->e[2 * k + 1];
  heap *const of[] = {[MI_RUN] = &work,  [MI_LOCAL] = &work, [MI_SEND] = &send,
                      [MI_RECV] = &recv, [MI_POST] = &work,  [MI_PART] = &work};
  for (uint32_t i = 0; i < n; i++)
    if (!indeg[i])
      heap_push(of[m->kind[i]], i);
  uint32_t placed = 0;
  while (send.n || work.n || recv.n) {
    uint32_t v = send.n   ? heap_pop(&send)
                 : work.n ? heap_pop(&work)
                          : heap_pop(&recv);
    inv[v] = placed;
    perm[placed++] = v;
    for (uint32_t k = s0[v]; k < s0[v + 1]; k++)
      if (!--indeg[succ[k]])
        heap_push(of[m->kind[succ[k]]], succ[k]);
  }
  /* the list and the edges renumbered (a cycle would leave tasks out:
   * the plan's order has none) */
  rc = placed == n ? RP_OK : RP_EINVAL;
  if (rc != RP_OK) {
    rp_exec_set_error(m->x, "mpi: the order of rank %d's tasks has a cycle",
                      m->rank);
    goto out;
  }
  memcpy(kind, m->kind, n);
  for (uint32_t i = 0; i < n; i++)
    m->kind[i] = kind[perm[i]];
  for (uint32_t i = 0; i < n; i++)
    s0[i] = m->node[perm[i]];
  memcpy(m->node, s0, n * sizeof *s0);
  for (uint32_t i = 0; i < n; i++)
    s0[i] = pieceof[perm[i]];
  memcpy(pieceof, s0, n * sizeof *s0);
  for (size_t k = 0; k < 2 * E->n; k++)
    E->e[k] = inv[E->e[k]];
out:
  free(indeg);
  free(s0);
  free(succ);
  free(perm);
  free(inv);
  free(work.a);
  free(recv.a);
  free(send.a);
  free(kind);
  return rc;
}

/* The successor lists (CSR) and in-degrees of the engine's tasks. */
static rp_status build_succ(mstate *m, const edges *E) {
  ostate *st = m->st;
  uint32_t *s0 = calloc((size_t)m->nitem + 1, sizeof *s0);
  m->succ = malloc((E->n + 1) * sizeof *m->succ);
  if (!s0 || !m->succ) {
    free(s0);
    return RP_ENOMEM;
  }
  for (size_t k = 0; k < E->n; k++) {
    s0[E->e[2 * k] + 1]++;
    st->task[E->e[2 * k + 1]].indeg0++;
  }
  for (uint32_t i = 0; i < m->nitem; i++) {
    st->task[i].s0 = s0[i];
    st->task[i].ns = s0[i + 1];
    s0[i + 1] += s0[i];
  }
  for (size_t k = 0; k < E->n; k++)
    m->succ[s0[E->e[2 * k]]++] = E->e[2 * k + 1];
  free(s0);
  m->nedge = (uint32_t)E->n;
  st->succ = m->succ;
  return RP_OK;
}

/* Whether images i and j are one memory here (the user's array). */
static int one_memory(const mstate *m, uint32_t i, uint32_t j) {
  return rp__sp_in_user(m->p, &m->part, i) &&
         rp__sp_in_user(m->p, &m->part, j) &&
         m->p->image[i].buf == m->p->image[j].buf;
}

/* A plan node's task for the engine: a kernel (or slice c of it, when not
 * NULL), a host task or a copy. */
static rp_status node_task(mstate *m, uint32_t i, const mchunk *c, uint32_t *nk,
                           uint32_t *nh) {
  const rp_plan *p = m->p;
  ostate *st = m->st;
  otask *t = &st->task[i];
  uint32_t v = m->node[i];
  const rp_plan_node *nd = &p->node[v];
  const rp_plan_access *a = p->acc + nd->acc0;
  if (nd->type == RP_OP_KERNEL) {
    if (!nd->kernel || !nd->kernel->cpu) {
      rp_exec_set_error(m->x, "mpi: kernel \"%s\" (node %u) has no CPU body",
                        nd->name, nd->op);
      return RP_ENOKERNEL;
    }
    const rp_kargs *tpl = rp_exec_args(m->x, nd->op);
    rp_kargs *ka = &m->kargs[(*nk)++].k;
    if (tpl)
      *ka = *tpl;
    if (c)
      rp__mpi_chunk_args(c, ka);
    t->kind = OT_KERNEL;
    t->fn.k = nd->kernel->cpu;
    t->p = ka;
    const uint64_t *nn = ka->n;
    t->sdim = nn[2] > 1 ? 2 : nn[1] > 1 ? 1 : 0;
    t->split = st->nth > 1 && nn[0] * nn[1] * nn[2] >= RP_OMP_SPLIT_MIN &&
               nn[t->sdim] > 1;
  } else if (nd->type == RP_OP_HOST) {
    if (!nd->host_fn) {
      rp_exec_set_error(m->x, "mpi: host task \"%s\" (node %u) has no function",
                        nd->name, nd->op);
      return RP_ENOKERNEL;
    }
    t->kind = OT_HOST;
    t->fn.h = nd->host_fn;
    t->user = nd->host_user;
    t->p = &m->hptr[*nh];
    *nh += nd->nacc;
  } else if (one_memory(m, a[0].image, a[1].image)) {
    t->kind = 0; /* a copy within the user's array: nothing moves */
  } else {
    ocopy *cp = &m->copy[i];
    *cp = (ocopy){a[0].image, a[1].image, a[1].niv,
                  p->iv + 2 * (uint64_t)a[1].iv0};
    t->kind = OT_COPY;
    t->p = cp;
  }
  return RP_OK;
}

/* The engine's tasks. */
static rp_status build_tasks(mstate *m, const uint32_t *pieceof) {
  const rp_plan *p = m->p;
  ostate *st = m->st;
  uint32_t nk = 0, nh = 0;
  for (uint32_t i = 0; i < m->nitem; i++)
    if (m->kind[i] == MI_RUN || m->kind[i] == MI_PART) {
      const rp_plan_node *nd = &p->node[m->node[i]];
      nk += nd->type == RP_OP_KERNEL;
      nh += nd->type == RP_OP_HOST ? nd->nacc : 0;
    }
  size_t tb = ((size_t)m->nitem + 1) * sizeof(otask);
  size_t kb = ((size_t)nk + 1) * sizeof(okargs);
  st->task = aligned_alloc(64, (tb + 63) / 64 * 64);
  m->kargs = aligned_alloc(64, (kb + 63) / 64 * 64);
  m->hptr = calloc((size_t)nh + 1, sizeof *m->hptr);
  m->copy = calloc((size_t)m->nitem + 1, sizeof *m->copy);
  if (!st->task || !m->kargs || !m->hptr || !m->copy)
    return RP_ENOMEM;
  memset(st->task, 0, tb);
  memset(m->kargs, 0, kb);
  st->n = m->nitem;
  nk = nh = 0;
  for (uint32_t i = 0; i < m->nitem; i++) {
    otask *t = &st->task[i];
    atomic_init(&t->done, 0);
    t->group = 0;
    if (m->kind[i] == MI_RUN || m->kind[i] == MI_PART) {
      rp_status rc = node_task(
          m, i, m->kind[i] == MI_PART ? &m->chunk[pieceof[i]] : NULL, &nk, &nh);
      if (rc != RP_OK)
        return rc;
      continue;
    }
    static void (*const body[])(void *) = {[MI_LOCAL] = local_body,
                                           [MI_SEND] = send_body,
                                           [MI_RECV] = recv_body,
                                           [MI_POST] = post_body};
    const mmsg *g = m->kind[i] == MI_POST ? NULL : &m->msg[pieceof[i]];
    if (m->kind[i] == MI_LOCAL && one_memory(m, g->src, g->dst))
      continue; /* kind 0: nothing moves */
    t->kind = OT_CALL;
    t->fn.c = body[m->kind[i]];
    t->p = m->kind[i] == MI_POST ? (void *)m : (void *)&m->msg[pieceof[i]];
  }
  return RP_OK;
}

/* Whether task r is among the predecessors p[p0[i] .. p0[i + 1]) of i. */
static int has_pred(const uint32_t *p0, const uint32_t *p, uint32_t i,
                    uint32_t r) {
  for (uint32_t k = p0[i]; k < p0[i + 1]; k++)
    if (p[k] == r)
      return 1;
  return 0;
}

/* The slices' counts: interior and boundary ones, and those that wait for
 * a receive: a receive among their direct predecessors that none of their
 * other predecessors follows already (edges E in list order; a receive
 * of the scatter that a slice's kernel overwrites is waited for by the
 * step's first kernel, not by the slice). */
static rp_status count_slices(mstate *m, const uint32_t *pieceof,
                              const edges *E) {
  uint32_t n = m->nitem;
  uint32_t *p0 = calloc((size_t)n + 2, sizeof *p0);
  uint32_t *p = malloc((E->n + 1) * sizeof *p);
  if (!p0 || !p) {
    free(p0);
    free(p);
    return RP_ENOMEM;
  }
  for (size_t k = 0; k < E->n; k++)
    p0[E->e[2 * k + 1] + 2]++;
  for (uint32_t i = 0; i < n; i++)
    p0[i + 2] += p0[i + 1];
  for (size_t k = 0; k < E->n; k++)
    p[p0[E->e[2 * k + 1] + 1]++] = E->e[2 * k];
  for (uint32_t i = 0; i < n; i++) {
    if (m->kind[i] != MI_PART)
      continue;
    int b = m->chunk[pieceof[i]].boundary, w = 0;
    for (uint32_t k = p0[i]; k < p0[i + 1] && !w; k++) {
      uint32_t r = p[k], via = 0;
      if (m->kind[r] != MI_RECV)
        continue;
      for (uint32_t q = p0[i]; q < p0[i + 1] && !via; q++)
        via = p[q] != r && has_pred(p0, p, p[q], r);
      w = !via;
    }
    m->nbnd += (uint32_t)b;
    m->nint += (uint32_t)!b;
    m->bnd_waits += (uint32_t)(b && w);
    m->int_waits += (uint32_t)(!b && w);
  }
  free(p0);
  free(p);
  return RP_OK;
}

rp_status rp__mpi_lower(mstate *m) {
  rp_status rc = build_msgs(m);
  if (rc != RP_OK || (rc = rp__mpi_cuts(m)) != RP_OK)
    return rc;
  size_t ni = (size_t)m->part.nnode + m->part.npiece + m->nchunk + 2;
  uint32_t *pieceof = malloc(ni * sizeof *pieceof);
  edges E = {0};
  if (!pieceof)
    return RP_ENOMEM;
  if ((rc = build_list(m, pieceof)) == RP_OK &&
      (rc = build_edges(m, pieceof, &E)) == RP_OK &&
      (rc = lazy_order(m, pieceof, &E)) == RP_OK &&
      (rc = count_slices(m, pieceof, &E)) == RP_OK &&
      (rc = barrier_edges(m, &E)) == RP_OK &&
      (rc = build_tasks(m, pieceof)) == RP_OK)
    rc = build_succ(m, &E);
  free(pieceof);
  free(E.e);
  return rc;
}

void rp__mpi_bind(mstate *m) {
  const rp_plan *p = m->p;
  ostate *st = m->st;
  for (uint32_t i = 0; i < m->nitem; i++) {
    if (m->kind[i] != MI_RUN && m->kind[i] != MI_PART)
      continue;
    const rp_plan_node *nd = &p->node[m->node[i]];
    const rp_plan_access *a = p->acc + nd->acc0;
    if (nd->type == RP_OP_KERNEL) {
      rp_kargs *ka = (rp_kargs *)st->task[i].p;
      for (uint32_t k = 0; k < nd->nacc; k++)
        if (a[k].image != RP_NONE)
          ka->a[k].p = st->img[a[k].image];
    } else if (nd->type == RP_OP_HOST) {
      void **hp = (void **)st->task[i].p;
      for (uint32_t k = 0; k < nd->nacc; k++)
        hp[k] = st->img[a[k].image];
    }
  }
}

void rp__mpi_lower_free(mstate *m) {
  for (uint32_t k = 0; m->msg && k < m->part.npiece; k++)
    free(m->msg[k].stage);
  free(m->msg);
  free(m->recv);
  free(m->send);
  free(m->sreq);
  free(m->kind);
  free(m->node);
  free(m->succ);
  free(m->kargs);
  free(m->hptr);
  free(m->copy);
  free(m->prof);
  rp__mpi_cuts_free(m);
  if (m->st) {
    free(m->st->task);
    m->st->task = NULL;
  }
}
