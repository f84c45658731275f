/* mpi backend: a graph replayed over the ranks of MPI_COMM_WORLD, each
 * rank's part (placed as the starpu backend's mode "mpi" places it:
 * backends/starpu/sp_part.c) run by the OpenMP backend's engine
 * (backends/openmp: in program order on one thread, the stealing engine on
 * several), its transfers between ranks as tasks posting nonblocking MPI
 * sends and receives (mpi_lower.c). No runtime between the tasks and MPI:
 * a replay costs the bodies, the packs and the messages.
 *
 * Every rank records the same program and creates the exec at the same
 * point (rp_exec_create duplicates MPI_COMM_WORLD: collective). MPI is
 * initialised by the program (MPI_Init_thread, MPI_THREAD_SERIALIZED at
 * least; MPI_THREAD_MULTIPLE for several threads per rank) or else by the
 * backend, which then finalises it at exit.
 *
 * Threads per rank: rp_exec_opts.nthreads, else the node's cores divided
 * by the ranks on the node (at least 1), pinned to the rank's own slice of
 * cores (rp_exec_opts.cores, else local rank L on cores L c .. L c + c - 1
 * when the process may run on every core of the node, the launcher having
 * bound nothing, and the threads are no more than c). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mpi_internal.h"

static int own_mpi; /* we called MPI_Init_thread */

/* The exec's figures by name, for rp_exec_stats(): what this rank
 * lowered (per replay), its team, and what the placement (sp_part.c)
 * gives the rank, which the lowering must match (docs/mpi.md). */
static rp_status m_stats(void *state, rp_exec_stat *out, unsigned max,
                         unsigned *count) {
  const mstate *m = state;
  uint64_t image_bytes = 0;
  for (uint32_t k = 0; k < m->part.nimage; k++) {
    const rp_plan_image *im = &m->p->image[m->part.image[k]];
    image_bytes += m->owned[m->part.image[k]] ? im->hi - im->lo : 0;
  }
  const int nc = m->st->ncores;
  const rp_exec_stat all[] = {{"rank", m->rank},
                              {"nranks", m->nranks},
                              {"nthreads", m->st->nth},
                              {"bound", m->st->tset != NULL},
                              {"ncores", nc},
                              {"core_first", nc ? m->st->cores[0] : -1},
                              {"core_last", nc ? m->st->cores[nc - 1] : -1},
                              {"tasks", m->nitem - m->nchunk + m->ncut},
                              {"engine_tasks", m->nitem},
                              {"cut", m->ncut},
                              {"interior", m->nint},
                              {"boundary", m->nbnd},
                              {"interior_waits", m->int_waits},
                              {"boundary_waits", m->bnd_waits},
                              {"sends", m->nsend},
                              {"recvs", m->nrecv},
                              {"edges", m->nedge},
                              {"image_bytes", (double)image_bytes},
                              {"part_tasks", m->part.tasks},
                              {"part_sends", m->part.sends},
                              {"part_recvs", m->part.recvs}};
  const unsigned nall = (unsigned)(sizeof all / sizeof *all);
  /* the network rp_exec_predict() measured, once it did (mpi_named.c) */
  const rp_exec_stat net[] = {{"net_latency_us", m->net_latency_us},
                              {"net_gbps", m->net_gbps}};
  const unsigned n = nall + (m->net_measured ? 2 : 0);
  for (unsigned i = 0; i < n && i < max; i++)
    out[i] = i < nall ? all[i] : net[i - nall];
  *count = n;
  return RP_OK;
}

static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin)
    MPI_Finalize();
}

static rp_status start_mpi(rp_exec *x, int *level) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, level) !=
        MPI_SUCCESS) {
      rp_exec_set_error(x, "mpi: MPI_Init_thread failed");
      return RP_ENODEV;
    }
    own_mpi = 1;
    atexit(finalize_at_exit);
  }
  MPI_Query_thread(level);
  if (*level < MPI_THREAD_SERIALIZED) {
    rp_exec_set_error(x,
                      "mpi: MPI was initialised with thread level %d; "
                      "the backend needs MPI_THREAD_SERIALIZED at least "
                      "(MPI_Init_thread)",
                      *level);
    return RP_ENOTSUP;
  }
  return RP_OK;
}

/* Threads and cores of this rank (see the head of this file). */
static rp_status choose_team(mstate *m, const rp_exec_opts *o, int level) {
  ostate *st = m->st;
  int nth = o->nthreads;
  if (nth < 0) {
    rp_exec_set_error(m->x, "mpi: nthreads %d < 0", nth);
    return RP_EINVAL;
  }
  if (o->cores && o->ncores) {
    st->ncores = o->ncores > RP_OMP_MAXT ? RP_OMP_MAXT : (int)o->ncores;
    for (int i = 0; i < st->ncores; i++) {
      if (o->cores[i] < 0 || o->cores[i] >= CPU_SETSIZE) {
        rp_exec_set_error(m->x, "mpi: core %d out of range", o->cores[i]);
        return RP_EINVAL;
      }
      st->cores[i] = o->cores[i];
    }
    if (!nth)
      nth = st->ncores;
  }
  if (!st->ncores) { /* the rank's slice of the node's cores */
    MPI_Comm node;
    int local = 1, me = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_size(node, &local);
      MPI_Comm_rank(node, &me);
      MPI_Comm_free(&node);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int c = (int)(ncpu / local);
    cpu_set_t mine;
    int all =
        !sched_getaffinity(0, sizeof mine, &mine) && CPU_COUNT(&mine) >= ncpu;
    if (!nth)
      nth = c > 1 ? c : 1;
    /* bound when the launcher bound nothing and the threads fit the
     * slice (more threads than its cores: left to the kernel) */
    if (all && c >= 1 && nth <= c && (me + 1) * c <= CPU_SETSIZE) {
      st->ncores = c > RP_OMP_MAXT ? RP_OMP_MAXT : c;
      for (int i = 0; i < st->ncores; i++)
        st->cores[i] = me * c + i;
    }
  }
  if (nth > 1 && level < MPI_THREAD_MULTIPLE) {
    rp_exec_set_notice(m->x,
                       "mpi: MPI_THREAD_MULTIPLE not provided: one thread "
                       "per rank instead of %d",
                       nth);
    nth = 1;
  }
  st->nth = nth > RP_OMP_MAXT ? RP_OMP_MAXT : nth;
  st->ngroups = 1;
  st->gsize[0] = st->nth;
  return rp__omp_bind_team(st);
}

/* Every image this rank touches: the user's array (a user image, or one
 * that rp__sp_alias keeps there), or memory of its own holding the bytes
 * its accesses touch (base pointer moved back by lo). */
static rp_status build_images(mstate *m) {
  const rp_plan *p = m->p;
  void *const *host = rp_exec_host(m->x);
  m->st->img = calloc((size_t)p->nimage + 1, sizeof *m->st->img);
  m->owned = calloc((size_t)p->nimage + 1, sizeof *m->owned);
  if (!m->st->img || !m->owned)
    return RP_ENOMEM;
  for (uint32_t k = 0; k < m->part.nimage; k++) {
    uint32_t i = m->part.image[k];
    const rp_plan_image *im = &p->image[i];
    if (rp__sp_in_user(p, &m->part, i)) { /* rp__sp_alias */
      m->st->img[i] = host[im->buf];
      continue;
    }
    uint64_t n = im->hi > im->lo ? im->hi - im->lo : 1;
    if (!(m->owned[i] = rp_image_alloc(n)))
      return RP_ENOMEM;
    m->st->img[i] = (char *)m->owned[i] - im->lo;
  }
  return RP_OK;
}

static void m_destroy(void *state) {
  mstate *m = state;
  if (!m)
    return;
  rp__mpi_live_remove(m);
  ostate *st = m->st;
  if (st) {
    rp__omp_steal_free(st);
    rp__omp_roots_free(st);
    free(st->tset);
  }
  int fin = 0;
  MPI_Finalized(&fin);
  for (uint32_t k = 0; !fin && m->msg && k < m->part.npiece; k++)
    if (m->msg[k].req != MPI_REQUEST_NULL) {
      MPI_Cancel(&m->msg[k].req);
      MPI_Wait(&m->msg[k].req, MPI_STATUS_IGNORE);
    }
  rp__mpi_lower_free(m);
  for (uint32_t i = 0; m->owned && i < m->p->nimage; i++)
    rp_image_free(m->owned[i]);
  free(m->owned);
  if (st) {
    free(st->img);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
  }
  rp__sp_part_free(&m->part);
  rp__sp_place_free(&m->place);
  if (m->comm_ok && !fin)
    MPI_Comm_free(&m->comm);
  free(m);
}

/* Usable in a process that initialised MPI or that an MPI launcher
 * started (Open MPI, MPICH/Hydra, PMIx, Slurm); anywhere else an MPI
 * singleton would start inside, say, a test that tries every backend. */
static rp_status m_probe(void) {
  int inited = 0;
  MPI_Initialized(&inited);
  static const char *const launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         "PMIX_RANK", "SLURM_STEP_ID"};
  for (size_t i = 0; !inited && i < sizeof launched / sizeof *launched; i++)
    inited = getenv(launched[i]) != NULL;
  if (inited)
    return RP_OK;
  rp_backend_set_error("mpi: not started by an MPI launcher (mpirun) and MPI "
                       "not initialised");
  return RP_ENODEV;
}

static unsigned m_exec_flags(const rp_exec_opts *o) {
  (void)o;
  return RP_BACKEND_SEPARATE_IMAGES;
}

static rp_status m_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  const rp_exec_opts *o = rp_exec_opts_get(x);
  if (o->mode && strcmp(o->mode, "mpi") && strcmp(o->mode, "whole")) {
    rp_exec_set_error(x, "mpi: unknown mode \"%s\" (mpi, whole, or none)",
                      o->mode);
    return RP_EINVAL;
  }
  int level = 0;
  rp_status rc = start_mpi(x, &level);
  if (rc != RP_OK)
    return rc;
  mstate *m = calloc(1, sizeof *m);
  ostate *st = m ? rp__omp_state_new(x, p) : NULL;
  if (!st) {
    free(m);
    return RP_ENOMEM;
  }
  *m = (mstate){
      .st = st, .x = x, .p = p, .nocut = o->mode && !strcmp(o->mode, "whole")};
  if (MPI_Comm_dup(MPI_COMM_WORLD, &m->comm) != MPI_SUCCESS) {
    rp_exec_set_error(x, "mpi: MPI_Comm_dup failed");
    rc = RP_ENODEV;
    goto fail;
  }
  m->comm_ok = 1;
  MPI_Comm_rank(m->comm, &m->rank);
  MPI_Comm_size(m->comm, &m->nranks);
  char err[256] = "";
  if ((rc = rp__sp_place(p, m->nranks, &m->place)) != RP_OK ||
      (rc = rp__sp_part(p, SP_MPI, m->rank, &m->place, &m->part, err,
                        sizeof err)) != RP_OK ||
      (rc = rp__sp_alias(p, SP_MPI, m->rank, &m->place, &m->part)) != RP_OK) {
    if (err[0])
      rp_exec_set_error(x, "%s", err);
    goto fail;
  }
  if ((rc = build_images(m)) != RP_OK ||
      (rc = choose_team(m, o, level)) != RP_OK ||
      (rc = rp__mpi_lower(m)) != RP_OK ||
      (rc = rp__omp_roots_init(st)) != RP_OK)
    goto fail;
  if (st->nth > 1 && (rc = rp__omp_steal_init(st)) != RP_OK)
    goto fail;
  if ((rc = rp__mpi_live_add(m)) != RP_OK)
    goto fail;
  rp__mpi_bind(m);
  *state = m;
  return RP_OK;
fail:
  if (rc == RP_ENOMEM)
    rp_exec_set_error(x, "mpi: out of memory instantiating rank %d's part",
                      m->rank);
  m_destroy(m);
  return rc;
}

/* Run the replays; then every send of the launch is complete (its staging
 * buffer free, nothing in flight when the launch returns). */
static rp_status m_launch(void *state, unsigned iterations) {
  mstate *m = state;
  ostate *st = m->st;
  st->be0 = st->lepoch;
  st->fcode = 0;
  atomic_store(&st->failed, 0);
  if (st->nth > 1) {
    rp__omp_steal_run(st, iterations);
  } else {
    rp__omp_run_caller(st, iterations);
  }
  for (uint32_t k = 0; k < m->nsend; k++)
    m->sreq[k] = m->msg[m->send[k]].req;
  MPI_Waitall((int)m->nsend, m->sreq, MPI_STATUSES_IGNORE);
  for (uint32_t k = 0; k < m->nsend; k++)
    m->msg[m->send[k]].req = MPI_REQUEST_NULL;
  if (!st->fcode)
    return RP_OK;
  const int code = st->fcode;
  st->fcode = 0;
  return rp_exec_fail_task(m->x, m->node[st->fnode],
                           (unsigned)(st->fepoch - st->be0 - 1), code,
                           st->fmsg);
}

static rp_status m_profile(void *state, double *node_us) {
  return rp__mpi_profile(state, node_us);
}

static rp_status m_wait(void *state) {
  (void)state;
  return RP_OK;
}

static rp_status m_rebind(void *state, rp_buf b) {
  mstate *m = state;
  void *h = rp_exec_host(m->x)[b];
  for (uint32_t k = 0; k < m->part.nimage; k++) {
    uint32_t i = m->part.image[k];
    if (rp__sp_in_user(m->p, &m->part, i) && m->p->image[i].buf == b)
      m->st->img[i] = h;
  }
  rp__mpi_bind(m);
  return RP_OK;
}

static rp_status m_set_scalar(void *state, uint32_t n, unsigned param) {
  mstate *m = state;
  if (n >= m->p->nnode || param >= RP_MAX_PARAMS)
    return RP_EINVAL;
  const rp_kargs *tpl = rp_exec_args(m->x, m->p->node[n].op);
  if (!tpl)
    return RP_EINVAL;
  for (uint32_t i = 0; i < m->nitem; i++)
    if (m->node[i] == n && m->st->task[i].kind == OT_KERNEL)
      ((rp_kargs *)m->st->task[i].p)->a[param] = tpl->a[param];
  return RP_OK;
}

const rp_backend rp_backend_mpi = {
    .abi = RP_BACKEND_ABI,
    .name = "mpi",
    .priority = -1, /* never chosen by "auto": asked for by name */
    .owns = RP_DEVICE_CPU,
    .flags = RP_BACKEND_BLOCKING_LAUNCH,
    .probe = m_probe,
    .instantiate = m_instantiate,
    .launch = m_launch,
    .wait = m_wait,
    .rebind = m_rebind,
    .set_scalar = m_set_scalar,
    .profile = m_profile,
    .destroy = m_destroy,
    .exec_flags = m_exec_flags,
    .options = RP_EXEC_OPT_NTHREADS | RP_EXEC_OPT_CORES,
    .stats = m_stats,
    .predict = rp__mpi_predict_named,
};
