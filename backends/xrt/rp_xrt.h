/* Internal interface of the XRT backend: the xclbin writer and reader,
 * and the per-compute-unit counters the tests read. */
#ifndef RP_XRT_INTERNAL_H
#define RP_XRT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "reprise/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most arguments, compute units and kernels the reader keeps. */
#define RP__XRT_MAX_ARGS 32
#define RP__XRT_MAX_CUS 32
#define RP__XRT_MAX_KERNELS 64

/* A kernel to put in a generated xclbin. `args` has one letter per
 * argument: 'g' a global pointer, 'i' int, 'u' uint, 'f' float,
 * 'd' double, 'l' a 64-bit integer. `ncu` compute units are named
 * "<name>_1", "<name>_2", ... */
typedef struct rp__xrt_kspec {
  const char *name;
  const char *args;
  unsigned ncu;
} rp__xrt_kspec;

/* Build an xclbin image (malloc'd into *out, *bytes long) holding
 * IP_LAYOUT, EMBEDDED_METADATA, MEM_TOPOLOGY and CONNECTIVITY for the
 * kernels. The uuid is derived from the content. */
rp_status rp__xrt_xclbin_build(const rp__xrt_kspec *k, unsigned nk, void **out,
                               size_t *bytes);

/* rp__xrt_xclbin_build() written to `path`. */
rp_status rp__xrt_xclbin_write(const char *path, const rp__xrt_kspec *k,
                               unsigned nk);

/* One argument of a kernel as the xclbin's metadata describes it. */
typedef struct rp__xrt_arg {
  int global;    /* 1: buffer (address qualifier 1 or 2) */
  unsigned size; /* bytes in the register map */
  char type[24]; /* host type string, e.g. "int", "uint", "float" */
} rp__xrt_arg;

/* What the backend needs to know of one kernel of an xclbin. */
typedef struct rp__xrt_kinfo {
  char name[64];
  unsigned nargs;
  rp__xrt_arg arg[RP__XRT_MAX_ARGS];
  unsigned ncu;
  char cu[RP__XRT_MAX_CUS][64]; /* instance names (after "kernel:") */
} rp__xrt_kinfo;

/* Check an xclbin image and extract its kernels: the compute units from
 * IP_LAYOUT and the arguments from EMBEDDED_METADATA. On failure writes a
 * message into err. Returns RP_OK, RP_EPARSE or RP_ENOMEM; *out is
 * malloc'd (free it) with *nk entries. */
rp_status rp__xrt_xclbin_parse(const void *img, size_t bytes,
                               rp__xrt_kinfo **out, unsigned *nk, char *err,
                               size_t errlen);

/* Runs started so far on compute unit `cu` (0-based, in xclbin order) of
 * kernel `kernel` on logical device `dev` by the exec whose backend state
 * is `state` (rp_exec's state pointer); 0 if there is no such unit. */
unsigned long rp__xrt_cu_runs(const void *state, const char *kernel, int dev,
                              unsigned cu);

/* Compute units of `kernel` on logical device `dev` (0 if not used). */
unsigned rp__xrt_num_cus(const void *state, const char *kernel, int dev);

#ifdef __cplusplus
}
#endif
#endif
