/* What the files of src/measure share. src/measure is the layer above
 * the analysis (src/analyze) and the replay (src/replay), which call
 * nothing of each other: it replays small graphs to measure a machine
 * (calibrate.c), keeps the calibrated models (model_cache.c), fills
 * analysis options from an exec (from_exec.c) and creates execs with the
 * split's chunks chosen by the model (exec_create.c). */
#ifndef RP_MEASURE_INTERNAL_H
#define RP_MEASURE_INTERNAL_H

#include <stdio.h>
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

/* Calls fn(fp, u) on /proc/self/task/T/<file> of each thread T of this
 * process, open for reading; returns how many calls returned 1 (0 when
 * the folder cannot be read) (from_exec.c). */
int rp__each_thread(const char *file, int (*fn)(FILE *fp, void *u), void *u);

#endif
