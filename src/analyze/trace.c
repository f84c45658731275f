/* Chrome trace-event JSON of the schedule (opens in Perfetto), whole or in
 * parts of a bounded number of events. */
#include <stdlib.h>
#include "analyze/analysis.h"
#include "core/out.h"

uint32_t rp_analysis_trace_parts(const rp_analysis *a, uint32_t max_events) {
  if (!a || !max_events || a->nop <= max_events)
    return 1;
  return (uint32_t)(((uint64_t)a->nop + max_events - 1) / max_events);
}

/* One process, one thread (track) per lane, named by metadata events;
 * one complete ("X") event per operation, times in microseconds. */
rp_status rp_analysis_write_trace_part(const rp_analysis *a, FILE *fp,
                                       uint32_t first, uint32_t count) {
  RP_ENTER();
  if (!a || !fp || first > a->nop)
    return RP_BAD_ARG();
  if (count > a->nop - first)
    count = a->nop - first;
  rp__out *w = rp__out_new(fp);
  if (!w)
    return RP_ENOMEM;
  rp__out_str(w, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
                 "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, "
                 "\"tid\": 0, \"args\": {\"name\": \"reprise schedule");
  if (first || count < a->nop) {
    rp__out_str(w, " (operations ");
    rp__out_u64(w, first);
    rp__out_str(w, " to ");
    rp__out_u64(w, first + count - (count > 0));
    rp__out_str(w, " of ");
    rp__out_u64(w, a->nop);
    rp__out_str(w, " in start order)");
  }
  rp__out_str(w, "\"}}");
  for (uint32_t l = 0; l < a->nlane; l++) {
    rp__out_str(w,
                ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
                "\"tid\": ");
    rp__out_u64(w, l + 1);
    rp__out_str(w, ", \"args\": {\"name\": ");
    rp__out_jstr(w, a->lanes[l].name);
    rp__out_str(w, "}},\n  {\"name\": \"thread_sort_index\", \"ph\": \"M\", "
                   "\"pid\": 1, \"tid\": ");
    rp__out_u64(w, l + 1);
    rp__out_str(w, ", \"args\": {\"sort_index\": ");
    rp__out_u64(w, l);
    rp__out_str(w, "}}");
  }
  for (uint32_t i = first; i < first + count && !w->bad; i++) {
    uint32_t n = a->order[i];
    rp__out_str(w, ",\n  {\"name\": ");
    rp__out_jstr(w, rp__op_name(a, n));
    rp__out_str(w, ", \"cat\": \"");
    rp__out_str(w, rp_op_type_name(a->g->op[n].type));
    rp__out_str(w, "\", \"ph\": \"X\", \"ts\": ");
    rp__out_num(w, a->start[n]);
    rp__out_str(w, ", \"dur\": ");
    rp__out_num(w, a->cost[n]);
    rp__out_str(w, ", \"pid\": 1, \"tid\": ");
    rp__out_u64(w, a->lane[n] + 1);
    rp__out_str(w, ", \"args\": {\"id\": ");
    rp__out_u64(w, n);
    rp__out_str(w, a->critical[n] ? ", \"critical\": true, \"slack_us\": "
                                  : ", \"critical\": false, \"slack_us\": ");
    rp__out_num(w, a->slack[n]);
    rp__out_str(w, ", \"cost\": \"");
    rp__out_str(w, rp__source_name((rp_cost_source)a->source[n]));
    rp__out_str(w, "\"}}");
  }
  rp__out_str(w, "\n]}\n");
  return rp__out_end(w) ? RP_EIO : RP_OK;
}

rp_status rp_analysis_write_trace(const rp_analysis *a, FILE *fp) {
  RP_ENTER();
  return rp_analysis_write_trace_part(a, fp, 0, a ? a->nop : 0);
}
