/* What the files of src/measure share. src/measure is the layer above
 * the analysis (src/analyze) and the replay (src/replay), which call
 * nothing of each other: it replays small graphs to measure a machine
 * (calibrate.c), keeps the calibrated models (model_cache.c), fills
 * analysis options from an exec (from_exec.c) and creates execs with the
 * split's chunks chosen by the model (exec_create.c). */
#ifndef RP_MEASURE_INTERNAL_H
#define RP_MEASURE_INTERNAL_H

#include "analyze/analysis.h"
#include "replay/exec.h"
#include "reprise/backend.h"
#include "reprise/measure.h"

/* Fills the key fields of m (machine, cpu, gpu, version, threads,
 * device_map) for backend be run with xo (NULL: defaults); version NULL:
 * rp_version() (model_cache.c). */
void rp__model_key(rp_model *m, const rp_backend *be, const rp_exec_opts *xo,
                   const char *version);
/* The team an openmp exec with options xo builds: nthreads, else the
 * given cores, else OMP_NUM_THREADS or the online cores (from_exec.c). */
long rp__omp_team(const rp_exec_opts *xo);
/* Measures the machine's load now into m: runnable (other runnable
 * tasks, the median of a few samples 5 ms apart), usable_cpus,
 * load_measured (from_exec.c). */
void rp__measure_load(rp_model *m);
/* GPU 0's name as the CUDA driver reports it, "" when it cannot say
 * (calibrate.c). */
void rp__gpu_name(char *out, size_t n);

/* Per node v of n, the median, smallest and largest of t[r * n + v]
 * over r < runs (any output may be NULL); col: runs scratch entries
 * (profile_team.c). */
void rp__team_stats(const double *t, unsigned runs, uint32_t n, double *col,
                    double *median, double *min, double *max);
/* A team's share of its cores from its threads' running and waiting
 * times: run / (run + wait), 0 when both are 0 (profile_team.c). */
double rp__team_share(double run, double wait);

#endif
