/* Chrome trace-event JSON of the schedule (opens in Perfetto). */
#include "analyze/analysis.h"

/* One process, one thread (track) per lane, named by metadata events;
 * one complete ("X") event per operation, times in microseconds. */
rp_status rp_analysis_write_trace(const rp_analysis *a, FILE *fp) {
  if (!a || !fp)
    return RP_EINVAL;
  fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
        "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, "
        "\"tid\": 0, \"args\": {\"name\": \"reprise schedule\"}}", fp);
  for (uint32_t l = 0; l < a->nlane; l++)
    fprintf(fp,
            ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
            "\"tid\": %u, \"args\": {\"name\": \"%s\"}},\n"
            "  {\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 1, "
            "\"tid\": %u, \"args\": {\"sort_index\": %u}}",
            l + 1, a->lanes[l].name, l + 1, l);
  for (uint32_t i = 0; i < a->nop; i++) {
    uint32_t n = a->order[i];
    fputs(",\n  {\"name\": ", fp);
    rp__put_json_str(fp, rp__op_name(a, n));
    fprintf(fp, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ",
            rp_op_type_name(a->g->op[n].type));
    rp__put_num(fp, a->start[n]);
    fputs(", \"dur\": ", fp);
    rp__put_num(fp, a->cost[n]);
    fprintf(fp, ", \"pid\": 1, \"tid\": %u, \"args\": {\"id\": %u, "
                "\"critical\": %s, \"slack_us\": ",
            a->lane[n] + 1, n, a->critical[n] ? "true" : "false");
    rp__put_num(fp, a->slack[n]);
    fprintf(fp, ", \"cost\": \"%s\"}}",
            rp__source_name((rp_cost_source)a->source[n]));
  }
  fputs("\n]}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
