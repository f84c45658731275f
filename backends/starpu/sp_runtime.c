/* StarPU's start-up, once per process. Starting takes tens of
 * milliseconds, so the runtime stays up until the process ends: with
 * StarPU-MPI it is shut down when MPI is finalised (an attribute of
 * MPI_COMM_SELF, whose delete callback MPI_Finalize calls first), or at
 * exit when the backend initialised MPI itself. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sp_internal.h"
#ifdef RP_STARPU_MPI
#include <starpu_mpi.h>
#endif

static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static rp__starpu_layout layout = {1, 0,  1, 0,
                                   1, -1, -1}; /* mode "mpi":
                                   this rank's place (place_rank) */
static int started; /* 0 no, 1 plain, 2 with MPI, -1 failed */
static int my_rank, world;
static int own_mpi; /* we called MPI_Init (through StarPU-MPI) */
/* StarPU's CPU workers poll for tasks in a tight loop (Debian's StarPU is
 * built with non-blocking drivers): left running, each burns a core for
 * as long as the process lives, the program's own work included (measured
 * in bench_mpi_jacobi: as much CPU as the hand-written MPI code itself).
 * So the workers run only while there is work for them: a launch of mode
 * "implicit" or "explicit" in flight, or in mode "mpi" a task of ours
 * ready or running (a rank waiting for messages only pauses them too:
 * measured, its worker otherwise burned 2 to 25 times the CPU of its task
 * bodies). The tasks count themselves: ready (StarPU's prologue callback,
 * called when a task's dependencies are met, before it is scheduled) and
 * done (its callback). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned active; /* launches in flight (modes without ranks) */
static uint64_t nready; /* mpi tasks ready or running */
static int paused;      /* we paused the workers */

static void gate(void) {
  int run = active > 0 || nready > 0;
  if (run && paused) {
    paused = 0;
    starpu_resume();
  } else if (!run && !paused) {
    paused = 1;
    starpu_pause();
  }
}

void rp__sp_busy(int on) {
  pthread_mutex_lock(&gate_mu);
  active += on ? 1 : -1;
  gate();
  pthread_mutex_unlock(&gate_mu);
}

void rp__sp_ready(int on) {
  pthread_mutex_lock(&gate_mu);
  nready += on ? 1 : (uint64_t)-1;
  gate();
  pthread_mutex_unlock(&gate_mu);
}

/* Workers running again, for StarPU's shutdown. */
static void unpause(void) {
  pthread_mutex_lock(&gate_mu);
  if (paused)
    starpu_resume();
  paused = 0;
  pthread_mutex_unlock(&gate_mu);
}

/* StarPU prints a banner and warnings unless told otherwise; a small
 * default number of CPU workers keeps start-up short (STARPU_NCPU wins). */
static void quiet_conf(struct starpu_conf *c, int mpi) {
  setenv("STARPU_SILENT", "1", 0);
  starpu_conf_init(c);
#ifndef STARPU_USE_CUDA
  c->ncuda = 0;
#endif
  /* where StarPU has CUDA, its CUDA workers (STARPU_NCUDA) take the
   * kernels that have a CUDA body (sp_cuda.c) */
  c->nopencl = 0;
  if (!getenv("STARPU_NCPU") && !getenv("STARPU_NCPUS")) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->ncpus = mpi ? layout.workers : (int)(n > 0 ? n : 1);
  }
}

#ifdef RP_STARPU_MPI
static int sp_mpi_finalize(MPI_Comm comm, int key, void *attr, void *extra) {
  unpause(); /* paused workers would not see the shutdown */
  starpu_mpi_shutdown();
  return MPI_SUCCESS;
}

static void sp_atexit(void) {
  unpause();
  starpu_mpi_shutdown();
}

/* How many ranks share this node and this rank's place among them: MPI's
 * view when MPI is up, else the launcher's environment (Open MPI,
 * MPICH/Hydra), else 1 and 0. */
static void node_ranks(int inited, int *size, int *rank) {
  *size = 1;
  *rank = 0;
  if (inited) {
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &node) == MPI_SUCCESS) {
      MPI_Comm_size(node, size);
      MPI_Comm_rank(node, rank);
      MPI_Comm_free(&node);
    }
    return;
  }
  const char *n = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char *r = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!n) {
    n = getenv("MPI_LOCALNRANKS");
    r = getenv("MPI_LOCALRANKID");
  }
  if (n)
    *size = atoi(n);
  if (r)
    *rank = atoi(r);
}

/* Workers and binding of this rank from the ranks on its node (mode
 * "mpi"): with `cores` / `ranks` >= 2 cores each, rank L of the node takes
 * cores [L c, (L + 1) c) (StarPU's logical numbering): its workers on the
 * first c - 1, StarPU-MPI's progress thread on the last, so that no two
 * threads of the node share a core; its workers, c - 1 unless STARPU_NCPU
 * says (then wrapped over those cores). With fewer cores than 2 per rank
 * (or a user placement: STARPU_WORKERS_CPUID or _COREID,
 * STARPU_MPI_THREAD_CPUID, STARPU_*_NOBIND; or a launcher that bound the process to fewer
 * cores than the node has) nothing is bound (each process would otherwise
 * bind its workers from core 0: all ranks of a node piling onto the same
 * cores, a message then costing milliseconds) and a rank has one worker,
 * or what STARPU_NCPU says. */
static void place_rank(int inited) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int ranks, me;
  node_ranks(inited, &ranks, &me);
  const char *nc = getenv("STARPU_NCPU");
  if (!nc)
    nc = getenv("STARPU_NCPUS");
  int want = nc ? atoi(nc) : 0;
  layout = (rp__starpu_layout){
      ranks, me, (int)(online > 0 ? online : 1), 0, want > 0 ? want : 1,
      -1,    -1};
  cpu_set_t set;
  int bound =
      !sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) < online;
  int per = ranks > 0 ? (int)(online / ranks) : 0;
  int user = getenv("STARPU_WORKERS_CPUID") ||
             getenv("STARPU_WORKERS_COREID") ||
             getenv("STARPU_MPI_THREAD_CPUID") ||
             getenv("STARPU_WORKERS_NOBIND") || getenv("STARPU_MPI_NOBIND");
  if (user)
    return; /* the user placed the threads */
  if (per < 2 || bound || me < 0 || me >= ranks) {
    if (ranks > 1) {
      setenv("STARPU_WORKERS_NOBIND", "1", 0);
      setenv("STARPU_MPI_NOBIND", "1", 0);
    }
    return;
  }
  int first = me * per, w = want > 0 ? want : per - 1;
  char list[1024] = "", num[16];
  size_t len = 0;
  for (int k = 0; k < w && len + 16 < sizeof list; k++) {
    int n =
        snprintf(num, sizeof num, "%s%d", k ? " " : "", first + k % (per - 1));
    memcpy(list + len, num, (size_t)n + 1);
    len += (size_t)n;
  }
  setenv("STARPU_WORKERS_CPUID", list, 1);
  snprintf(num, sizeof num, "%d", first + per - 1);
  setenv("STARPU_MPI_THREAD_CPUID", num, 1);
  layout.workers = w;
  layout.bound = 1;
  layout.first_cpu = first;
  layout.mpi_cpu = first + per - 1;
}

static rp_status start_mpi(char *err, size_t errlen) {
  int inited = 0, level = 0;
  MPI_Initialized(&inited);
  /* StarPU-MPI's mode running the worker inside its progress thread
   * sleeps whenever no message is pending, with ready tasks left unrun:
   * a replay hangs in it (docs/mpi.md). Refuse it rather than hang. */
  const char *drv = getenv("STARPU_MPI_DRIVER_CALL_FREQUENCY");
  if (drv && atoi(drv) > 0) {
    snprintf(err, errlen,
             "starpu mpi: STARPU_MPI_DRIVER_CALL_FREQUENCY=%s "
             "(the worker inside StarPU-MPI's progress thread) hangs a "
             "replay; unset it",
             drv);
    return RP_ENOTSUP;
  }
  /* Open MPI polls in a tight loop while a request is pending: have it
   * yield the core when nothing progressed, where ranks' threads share
   * cores (only read at MPI_Init: where the backend initialises MPI; a
   * program calling MPI_Init itself sets it in its environment) */
  if (!inited)
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  /* workers and binding from the ranks on this node (place_rank) */
  place_rank(inited);
  if (inited) {
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED) {
      snprintf(err, errlen,
               "starpu mpi: MPI was initialised with thread "
               "level %d; StarPU-MPI needs MPI_THREAD_SERIALIZED at least "
               "(MPI_Init_thread)",
               level);
      return RP_ENOTSUP;
    }
  }
  struct starpu_conf c;
  quiet_conf(&c, 1);
  if (starpu_mpi_init_conf(NULL, NULL, !inited, MPI_COMM_WORLD, &c)) {
    snprintf(err, errlen, "starpu mpi: starpu_mpi_init_conf failed");
    return RP_ENODEV;
  }
  own_mpi = !inited;
  if (own_mpi) {
    atexit(sp_atexit);
  } else {
    int key;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, sp_mpi_finalize, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
  }
  starpu_mpi_comm_rank(MPI_COMM_WORLD, &my_rank);
  starpu_mpi_comm_size(MPI_COMM_WORLD, &world);
  return RP_OK;
}
#endif

rp_status rp__sp_start(int mpi, int *rank, int *nranks, char *err,
                       size_t errlen) {
  rp_status s = RP_OK;
  pthread_mutex_lock(&start_mu);
  int was = started;
  if (!started) {
#ifdef RP_STARPU_MPI
    if (mpi) {
      s = start_mpi(err, errlen);
      started = s == RP_OK ? 2 : -1;
    }
#endif
    if (!mpi) {
      struct starpu_conf c;
      quiet_conf(&c, 0);
      if (starpu_init(&c)) {
        snprintf(err, errlen, "starpu: starpu_init failed");
        s = RP_ENODEV;
      }
      started = s == RP_OK ? 1 : -1;
      my_rank = 0;
      world = 1;
    }
  } else if (started < 0) {
    snprintf(err, errlen, "starpu: the runtime failed to start");
    s = RP_ENODEV;
  } else if (mpi && started != 2) {
    snprintf(err, errlen,
             "starpu: mode \"mpi\" needs StarPU-MPI, but "
#ifdef RP_STARPU_MPI
             "StarPU was started without it by an earlier exec of this "
             "process (create the mpi exec first)"
#else
             "this library was built without it"
#endif
    );
    s = RP_ENOTSUP;
  }
#ifndef RP_STARPU_MPI
  if (mpi && s == RP_OK && !started) {
    snprintf(err, errlen,
             "starpu: mode \"mpi\" needs StarPU-MPI, which "
             "this library was built without");
    s = RP_ENOTSUP;
  }
#endif
  if (s == RP_OK && started > 0 && !was) {
    pthread_mutex_lock(&gate_mu);
    gate(); /* idle until there is work (rp__sp_busy, rp__sp_ready) */
    pthread_mutex_unlock(&gate_mu);
  }
  *rank = mpi ? my_rank : 0;
  *nranks = mpi ? world : 1;
  pthread_mutex_unlock(&start_mu);
  return s;
}

rp_status rp__starpu_layout_get(rp__starpu_layout *out) {
  pthread_mutex_lock(&start_mu);
  int ok = started == 2;
  if (ok)
    *out = layout;
  pthread_mutex_unlock(&start_mu);
  return ok ? RP_OK : RP_EINVAL;
}
