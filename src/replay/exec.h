/* The backend-neutral executor's state (replay/exec.c). */
#ifndef RP_EXEC_H
#define RP_EXEC_H

#include <pthread.h>
#include "record/graph.h"
#include "replay/plan.h"
#include "transform/pass.h"

/* Chooses the chunks k of rp_exec_opts.split = RP_EXEC_SPLIT_AUTO for
 * graph g on backend be. The replay does not choose (that needs the
 * machine model and the analysis, which sit beside it): the layer above,
 * src/measure, passes its chooser to rp__exec_create(). */
typedef unsigned (*rp__split_choose_fn)(const rp_graph *g, const rp_backend *be,
                                        const rp_exec_opts *xo);

struct rp_exec {
  const rp_graph *g;  /* the graph replayed: the user's, or split.g */
  const rp_graph *ug; /* the user's graph */
  rp__rewrite rw;     /* the passes' rewrite (rw.g NULL: none) */
  unsigned chunks;    /* chunks of the split (1: none) */
  rp__split_choose_fn choose_split; /* RP_EXEC_SPLIT_AUTO's k, or NULL: 1 */
  const rp_backend *be;
  const rp_backend *asked; /* checking mode: the backend asked for (be is
                              the checked reference); else NULL */
  void *state;
  rp_exec_opts opts;
  void **host;     /* per buffer */
  rp_kargs *kargs; /* per kernel node */
  uint32_t *kidx;  /* node -> index in kargs, RP_NONE for others */
  int *cores;      /* copy of opts.cores */
  int *device_map; /* copy of opts.device_map */
  rp__plan *plan;
  double last_us;
  double t0;
  int launched;
  unsigned launched_iters;
  uint64_t batch; /* launches so far */
  /* Backends with RP_BACKEND_BLOCKING_LAUNCH: their launch runs on this
   * thread so that rp_exec_launch() returns at once. */
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int th_on, th_busy, th_quit;
  unsigned th_iters;
  rp_status th_status;
  void **guard;    /* per plan image: a backend's image of
                         rp_image_alloc() whose guards are checked after
                         every replay and at destroy (NULL: none) */
  uint32_t nguard; /* entries of guard */
  char err[512];   /* the last call's failure ("" after a success) */
  char note[512];  /* what the last call noted after succeeding */
};

/* rp_exec_create() with the chooser of RP_EXEC_SPLIT_AUTO's chunks
 * (NULL: no split). The public rp_exec_create() is src/measure's: it
 * passes the chooser that asks the machine model. */
rp_status rp__exec_create(rp_exec **out, const rp_graph *g,
                          const rp_backend *be, const rp_exec_opts *o,
                          rp__split_choose_fn choose);
/* The versioning rule (core/versioned.c) at the entries taking an
 * rp_exec_opts: dst gets the defaults, then the caller's src (NULL: none)
 * over them; RP_EINVAL with rp_last_error() naming @p what for a size it
 * refuses. */
rp_status rp__exec_opts_in(rp_exec_opts *dst, const rp_exec_opts *src,
                           const char *what);

/* Every public call on an exec starts here: its error and notice, and the
 * thread's rp_last_error(), are cleared. */
void rp__exec_begin(rp_exec *x);
/* rp_exec_run and rp_exec_wait without rp__exec_begin, for calls made
 * inside another call (rp_exec_run_until, profiling). */
rp_status rp__exec_run(rp_exec *x, unsigned iterations);
rp_status rp__exec_wait(rp_exec *x);
/* After a replay (a few words per image) or at destroy (@p full: the
 * whole zones): RP_OK, or RP_EACCESS with the exec's error naming the
 * first image whose guard zone is damaged, its buffer and writers (the
 * guards are then re-armed). */
rp_status rp__exec_guards(rp_exec *x, int full);
/* The backend's timeline hook on this exec, per plan node
 * (rp_exec_timeline() maps the times to operations). */
rp_status rp__exec_timeline(rp_exec *x, double *start_us, double *end_us);
/* Runs the graph -> graph passes that x->opts asks for on g
 * (replay/passes.c): on success x->g is the graph to replay (g itself when
 * nothing was rewritten) and x->rw its map back; else x->err says why. */
rp_status rp__exec_passes(rp_exec *x, const rp_graph *g, const rp_backend *be);
/* rp_exec_profile(): per op of the user's graph (user 1), or of the graph
 * replayed (user 0: its chunks when split). */
rp_status rp__exec_profile(rp_exec *x, double *op_us, int user);

/* Per node v of n: the median, smallest and largest of t[r * n + v] over
 * the runs r (any output may be NULL); col: runs scratch entries
 * (profile.c; also the team profile's, src/measure). */
void rp__op_stats(const double *t, unsigned runs, uint32_t n, double *col,
                  double *median, double *min, double *max);

#endif
