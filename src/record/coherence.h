/* The coherence model (record/coherence.c): per buffer and segment, the
 * version of the data each memory space holds, in program order, over
 * replays. Used by rp_graph_end() for its warnings and by the plan to
 * decide which spaces may share one image. */
#ifndef RP_COHERENCE_H
#define RP_COHERENCE_H

#include <stdbool.h>
#include "reprise/record.h"

typedef struct rp__coh rp__coh;

/* Gather the accesses of ended or recording graph g, by buffer. */
rp_status rp__coh_build(const rp_graph *g, rp__coh **out);
void rp__coh_free(rp__coh *c);

/* Whether the spaces of buffer b in @p spaces (bit 63 the host, bit d
 * device d) can be one memory without any read or the user's array at the
 * end of a replay seeing another value than the reference, over every
 * replay. */
rp_status rp__coh_share(const rp__coh *c, rp_buf b, uint64_t spaces, bool *ok);

/* One replay as the reference runs it: calls warn for each device read of
 * memory nothing wrote or copied in, and each user array that misses the
 * last value written on a device. Stops at warn's first failure. */
rp_status rp__coh_check(const rp__coh *c,
                        rp_status (*warn)(void *ctx, const char *msg),
                        void *ctx);

#endif
