/* Building and freeing the execution plan (replay/plan*.c). The plan's
 * public layout is in reprise/backend.h. */
#ifndef RP_PLAN_H
#define RP_PLAN_H

#include "reprise/backend.h"
#include "core/core.h"

typedef struct rp__plan rp__plan;

/* Build the plan of ended graph g for backend be. On failure *out is NULL
 * and err says why. */
rp_status rp__plan_build(const rp_graph *g, const rp_backend *be,
                         rp__plan **out, char *err, size_t errlen);
void rp__plan_free(rp__plan *p);
/* The public view. */
const rp_plan *rp__plan_view(const rp__plan *p);

/* Internal pieces shared by the plan's files. */
typedef struct rp__pedge {
  uint32_t from, to;
} rp__pedge;

/* The orderings that sharing images needs (replay/plan_share.c): for every
 * image serving several spaces, the conflicting accesses of different
 * spaces in program order; appended to *e (grown, count *ne, cap *cap). */
rp_status rp__plan_share_edges(const rp_plan *p, rp__pedge **e, size_t *ne,
                               size_t *cap);

#endif
