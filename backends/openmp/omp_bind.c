/* Where the team's threads run (issue 31).
 *
 * Sources, in order: the options' cores (thread i on cores[i % ncores]);
 * else, when OpenMP binding is asked (omp_get_proc_bind() != false, from
 * OMP_PROC_BIND or OMP_PLACES), OpenMP's place list under its policy
 * (close and true: consecutive places from the caller's; spread: places
 * spread evenly; primary: the caller's place while it has a CPU per
 * thread, else close); else nothing is pinned and the team's threads run
 * on the process's CPU set. Threads that a policy puts in one place get
 * distinct CPUs of it while it has enough.
 *
 * The process's CPU set is read once, in a constructor, before main: an
 * OpenMP runtime's own constructor may already have bound the main thread
 * to its first place (libgomp does), so the set is that mask joined with
 * every OpenMP place (built by the runtime from the process's mask). The
 * calling thread's mask is never the source: after a bound OpenMP region
 * it is one place.
 *
 * The caller of a launch is thread 0 but remains the user's thread: it is
 * pinned only when its mask is not already within thread 0's CPUs, and
 * then only for the launch (rp__omp_pin_caller / rp__omp_unpin_caller
 * restore its exact mask). A caller found within them once (the usual
 * case: an OpenMP runtime bound it to the place thread 0 was given) is
 * not asked again: a launch then makes no system call. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "omp_internal.h"

/* omp_proc_bind_primary (OpenMP 5.1; master before): 2 in every omp.h */
#define OMP_BIND_PRIMARY 2

static cpu_set_t proc_set;
static bool proc_known;

__attribute__((constructor)) static void read_process_set(void) {
  proc_known = !sched_getaffinity(0, sizeof proc_set, &proc_set);
}

/* OpenMP place p's CPUs; false if it has none. */
static bool place_set(int p, cpu_set_t *s) {
  int n = omp_get_place_num_procs(p);
  CPU_ZERO(s);
  if (n <= 0)
    return false;
  int *ids = malloc((size_t)n * sizeof *ids);
  if (!ids)
    return false;
  omp_get_place_proc_ids(p, ids);
  for (int i = 0; i < n; i++)
    if (ids[i] >= 0 && ids[i] < CPU_SETSIZE)
      CPU_SET(ids[i], s);
  free(ids);
  return CPU_COUNT(s) > 0;
}

bool rp__omp_process_set(cpu_set_t *s) {
  CPU_ZERO(s);
  if (proc_known)
    *s = proc_set;
  cpu_set_t pl;
  for (int p = 0; p < omp_get_num_places(); p++)
    if (place_set(p, &pl))
      CPU_OR(s, s, &pl);
  return CPU_COUNT(s) > 0;
}

/* The places a bound team uses: OpenMP's (each within the process's CPU
 * set, the empty ones dropped), or one per CPU of that set when the
 * runtime has none. Returns how many (at most max). */
static int team_places(cpu_set_t *pl, int max) {
  cpu_set_t ps;
  bool have = rp__omp_process_set(&ps);
  int np = 0;
  for (int p = 0; p < omp_get_num_places() && np < max; p++)
    if (place_set(p, &pl[np])) {
      if (have)
        CPU_AND(&pl[np], &pl[np], &ps);
      np += CPU_COUNT(&pl[np]) > 0;
    }
  if (!np && have)
    for (int c = 0; c < CPU_SETSIZE && np < max; c++)
      if (CPU_ISSET(c, &ps)) {
        CPU_ZERO(&pl[np]);
        CPU_SET(c, &pl[np++]);
      }
  return np;
}

/* The caller's place: the one its mask lies within, else the runtime's
 * view of it, else the first. */
static int caller_place(const cpu_set_t *pl, int np) {
  cpu_set_t me, both;
  if (!pthread_getaffinity_np(pthread_self(), sizeof me, &me))
    for (int p = 0; p < np; p++) {
      CPU_AND(&both, &me, &pl[p]);
      if (CPU_EQUAL(&both, &me))
        return p;
    }
  int p = omp_get_place_num();
  return p >= 0 && p < np ? p : 0;
}

/* place[i]: thread i's place under OpenMP's policy bind, with nth threads
 * over np places, thread 0 on place p0 (OpenMP 5.2, 10.1.3). */
static void assign(int bind, int nth, int np, int p0, const cpu_set_t *pl,
                   int *place) {
  if (bind == OMP_BIND_PRIMARY && CPU_COUNT(&pl[p0]) >= nth) {
    for (int i = 0; i < nth; i++)
      place[i] = p0;
    return;
  }
  if (bind == omp_proc_bind_spread && nth <= np) {
    /* nth subpartitions of consecutive places, the first np % nth one
     * longer; thread i on the first place of subpartition i */
    int s = np / nth, rem = np % nth, at = 0;
    for (int i = 0; i < nth; i++) {
      place[i] = (p0 + at) % np;
      at += s + (i < rem);
    }
    return;
  }
  /* close (and true, and the others past their cases): thread i on place
   * p0 + i; with more threads than places, consecutive threads share a
   * place, the first nth % np places one more */
  if (nth <= np) {
    for (int i = 0; i < nth; i++)
      place[i] = (p0 + i) % np;
    return;
  }
  int s = nth / np, rem = nth % np, i = 0;
  for (int p = 0; p < np; p++)
    for (int k = 0; k < s + (p < rem); k++)
      place[i++] = (p0 + p) % np;
}

/* Thread sets from places: a place with one thread gives it all its CPUs;
 * k threads in a place of c >= k CPUs get c / k distinct CPUs each; more
 * threads than CPUs share the place. */
static void split_places(ostate *st, const cpu_set_t *pl, const int *place) {
  for (int i = 0; i < st->nth; i++) {
    int k = 0, j = 0;
    for (int t = 0; t < st->nth; t++) {
      if (place[t] == place[i]) {
        j += t < i;
        k++;
      }
    }
    const cpu_set_t *s = &pl[place[i]];
    int c = CPU_COUNT(s);
    st->tset[i] = *s;
    if (k == 1 || k > c)
      continue;
    CPU_ZERO(&st->tset[i]);
    for (int cpu = 0, n = 0; cpu < CPU_SETSIZE; cpu++)
      if (CPU_ISSET(cpu, s)) {
        if (n * k / c == j)
          CPU_SET(cpu, &st->tset[i]);
        n++;
      }
  }
}

rp_status rp__omp_bind_team(ostate *st) {
  const char *src = NULL;
  cpu_set_t all;
  int ncpu;
  int bind = omp_get_proc_bind();
  if (st->ncores || bind != omp_proc_bind_false) {
    if (!(st->tset = malloc((size_t)st->nth * sizeof *st->tset)))
      return RP_ENOMEM;
  }
  if (st->ncores) {
    for (int i = 0; i < st->nth; i++) {
      CPU_ZERO(&st->tset[i]);
      CPU_SET(st->cores[i % st->ncores], &st->tset[i]);
    }
    src = "the cores given";
  } else if (st->tset) {
    cpu_set_t *pl = malloc(CPU_SETSIZE * sizeof *pl);
    int *place = malloc((size_t)st->nth * sizeof *place);
    if (!pl || !place) {
      free(pl);
      free(place);
      return RP_ENOMEM; /* st->tset: freed with st */
    }
    int np = team_places(pl, CPU_SETSIZE);
    if (np) {
      assign(bind, st->nth, np, caller_place(pl, np), pl, place);
      split_places(st, pl, place);
    }
    free(pl);
    free(place);
    if (!np) { /* nowhere known to bind to: the team is left unbound */
      free(st->tset);
      st->tset = NULL;
    }
    src = "OpenMP's places";
  }
  if (st->tset) {
    CPU_ZERO(&all);
    for (int i = 0; i < st->nth; i++)
      CPU_OR(&all, &all, &st->tset[i]);
  } else {
    if (!rp__omp_process_set(&all)) {
      rp__omp_idle_init(st, 0);
      return RP_OK;
    }
    st->pset = all;
    st->pset_ok = true;
    src = "the process's CPU set";
  }
  ncpu = CPU_COUNT(&all);
  rp__omp_idle_init(st, ncpu);
  if (st->nth > 1 && st->nth > ncpu)
    rp_exec_set_notice(st->x,
                       "openmp: %d threads on %d CPU%s (%s): "
                       "threads share CPUs",
                       st->nth, ncpu, ncpu == 1 ? "" : "s", src);
  return RP_OK;
}

void rp__omp_pin(ostate *st, int me) {
  if (st->pinned[me] == (unsigned long)pthread_self())
    return;
  cpu_set_t mine;
  if (st->tset) {
    if (!pthread_setaffinity_np(pthread_self(), sizeof st->tset[me],
                                &st->tset[me]))
      st->pinned[me] = (unsigned long)pthread_self();
    return;
  }
  /* unpinned: an OpenMP runtime's thread (mode "owner") inherited the
   * mask of the thread that created it, perhaps one CPU: it gets the
   * process's CPU set (read by the caller at binding: a team thread
   * calling the OpenMP runtime raced inside libomp under TSan), once */
  st->pinned[me] = (unsigned long)pthread_self();
  if (st->pset_ok &&
      !pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) &&
      !CPU_EQUAL(&mine, &st->pset))
    pthread_setaffinity_np(pthread_self(), sizeof st->pset, &st->pset);
}

/* rp__omp_pin_caller for a pinned team (kept apart: the unpinned fast
 * path is a test and a return) */
static bool pin_caller(ostate *st, cpu_set_t *old) {
  const unsigned long me = (unsigned long)pthread_self();
  if (st->caller_in == me ||
      pthread_getaffinity_np(pthread_self(), sizeof *old, old))
    return false;
  cpu_set_t both;
  CPU_AND(&both, old, &st->tset[0]);
  if (CPU_EQUAL(&both, old)) { /* already within thread 0's CPUs */
    st->caller_in = me;
    return false;
  }
  return !pthread_setaffinity_np(pthread_self(), sizeof st->tset[0],
                                 &st->tset[0]);
}

bool rp__omp_pin_caller(ostate *st, cpu_set_t *old) {
  return st->tset && pin_caller(st, old);
}

void rp__omp_unpin_caller(const cpu_set_t *old) {
  pthread_setaffinity_np(pthread_self(), sizeof *old, old);
}

bool rp__omp_thread_attr(const ostate *st, int me, pthread_attr_t *a) {
  cpu_set_t ps, mine;
  if (st->tset)
    return !pthread_attr_setaffinity_np(a, sizeof st->tset[me], &st->tset[me]);
  /* unbound: the process's CPU set, not the caller's mask, unless they
   * are the same (then the thread inherits it) */
  if (!rp__omp_process_set(&ps) ||
      (!pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) &&
       CPU_EQUAL(&mine, &ps)))
    return false;
  return !pthread_attr_setaffinity_np(a, sizeof ps, &ps);
}
