/* Workloads of the prediction suite (bench_predict): graphs the machine
 * model was never tuned on. Valid C and C++ (built by nvcc where CUDA is,
 * so that the generic kernels run on a GPU too). */
#ifndef RP_PREDICT_WORKLOADS_H
#define RP_PREDICT_WORKLOADS_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One workload: record() allocates its host data (returned in *state),
 * registers it in g (recording, ended by the caller) and records one
 * replay's operations on device `device`; reset() puts the initial data
 * back; release() frees it. `scale` (1: the default size) multiplies the
 * work. */
typedef struct pw_workload {
  const char *name;
  const char *what;
  rp_status (*record)(rp_graph *g, int device, unsigned scale, void **state);
  void (*reset)(void *state);
  void (*release)(void *state);
} pw_workload;

/* n arrays of len doubles, one buffer each ("X0", "X1", ...), values in
 * (0.2, 0.8) (predict_workloads.c; the workloads' state). */
typedef struct pw_blocks {
  unsigned n;
  uint64_t len;
  double **x;
  rp_buf *bx;
} pw_blocks;
/* Allocates them into *out (freed by pw_blocks_release() even on
 * failure) and registers them in g. */
rp_status pw_blocks_make(rp_graph *g, unsigned n, uint64_t len,
                         pw_blocks **out);
void pw_blocks_reset(void *p);
void pw_blocks_release(void *p);
/* Records a sync to the host of every array. */
rp_status pw_blocks_sync(rp_graph *g, const pw_blocks *b);

extern const pw_workload pw_workloads[];
extern const unsigned pw_nworkloads;
/* Check workloads (predict_check_workloads.c, issue 33): written only to
 * check the model, never to tune it; names start with "c_". */
extern const pw_workload pc_workloads[];
extern const unsigned pc_nworkloads;

#ifdef __cplusplus
}
#endif
#endif
