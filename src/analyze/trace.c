/* Chrome trace-event JSON of the schedule (opens in Perfetto), whole or in
 * parts of a bounded number of events. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

/* Writes through a local buffer: one fwrite per 32 KiB, not a formatted
 * call per field. */
typedef struct tw {
  FILE *fp;
  size_t n;
  int bad;
  char buf[1 << 15];
} tw;

static void t_flush(tw *w) {
  if (w->n && !w->bad && fwrite(w->buf, 1, w->n, w->fp) != w->n)
    w->bad = 1;
  w->n = 0;
}

static void t_mem(tw *w, const char *s, size_t n) {
  while (n) {
    if (w->n == sizeof w->buf)
      t_flush(w);
    size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
    memcpy(w->buf + w->n, s, k);
    w->n += k;
    s += k;
    n -= k;
  }
}

static void t_str(tw *w, const char *s) { t_mem(w, s, strlen(s)); }

static void t_u32(tw *w, uint32_t v) {
  char t[12];
  int i = (int)sizeof t;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  t_mem(w, t + i, sizeof t - (size_t)i);
}

/* As rp__put_num: the shortest of %.15g..%.17g that reads back equal. */
static void t_num(tw *w, double v) {
  if (!isfinite(v)) {
    t_str(w, "null");
    return;
  }
  if (v >= 0 && v < 4e9 && !signbit(v) && v == (double)(uint32_t)v) { /* whole microseconds: most times */
    t_u32(w, (uint32_t)v);
    return;
  }
  char buf[40];
  for (int p = 15; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  t_str(w, buf);
}

static void t_jstr(tw *w, const char *s) {
  t_mem(w, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
      continue;
    t_mem(w, run, (size_t)(s - run));
    run = s + 1;
    char e[8];
    if (c == '"' || c == '\\')
      snprintf(e, sizeof e, "\\%c", c);
    else if (c == '\n')
      snprintf(e, sizeof e, "\\n");
    else if (c == '\t')
      snprintf(e, sizeof e, "\\t");
    else
      snprintf(e, sizeof e, "\\u%04x", c);
    t_str(w, e);
  }
  t_mem(w, run, (size_t)(s - run));
  t_mem(w, "\"", 1);
}

uint32_t rp_analysis_trace_parts(const rp_analysis *a, uint32_t max_events) {
  if (!a || !max_events || a->nop <= max_events)
    return 1;
  return (uint32_t)(((uint64_t)a->nop + max_events - 1) / max_events);
}

/* One process, one thread (track) per lane, named by metadata events;
 * one complete ("X") event per operation, times in microseconds. */
rp_status rp_analysis_write_trace_part(const rp_analysis *a, FILE *fp,
                                       uint32_t first, uint32_t count) {
  if (!a || !fp || first > a->nop)
    return RP_EINVAL;
  if (count > a->nop - first)
    count = a->nop - first;
  tw *w = malloc(sizeof *w);
  if (!w)
    return RP_ENOMEM;
  w->fp = fp;
  w->n = 0;
  w->bad = 0;
  t_str(w, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
           "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, "
           "\"tid\": 0, \"args\": {\"name\": \"reprise schedule");
  if (first || count < a->nop) {
    t_str(w, " (operations ");
    t_u32(w, first);
    t_str(w, " to ");
    t_u32(w, first + count - (count > 0));
    t_str(w, " of ");
    t_u32(w, a->nop);
    t_str(w, " in start order)");
  }
  t_str(w, "\"}}");
  for (uint32_t l = 0; l < a->nlane; l++) {
    t_str(w, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
             "\"tid\": ");
    t_u32(w, l + 1);
    t_str(w, ", \"args\": {\"name\": ");
    t_jstr(w, a->lanes[l].name);
    t_str(w, "}},\n  {\"name\": \"thread_sort_index\", \"ph\": \"M\", "
             "\"pid\": 1, \"tid\": ");
    t_u32(w, l + 1);
    t_str(w, ", \"args\": {\"sort_index\": ");
    t_u32(w, l);
    t_str(w, "}}");
  }
  for (uint32_t i = first; i < first + count && !w->bad; i++) {
    uint32_t n = a->order[i];
    t_str(w, ",\n  {\"name\": ");
    t_jstr(w, rp__op_name(a, n));
    t_str(w, ", \"cat\": \"");
    t_str(w, rp_op_type_name(a->g->op[n].type));
    t_str(w, "\", \"ph\": \"X\", \"ts\": ");
    t_num(w, a->start[n]);
    t_str(w, ", \"dur\": ");
    t_num(w, a->cost[n]);
    t_str(w, ", \"pid\": 1, \"tid\": ");
    t_u32(w, a->lane[n] + 1);
    t_str(w, ", \"args\": {\"id\": ");
    t_u32(w, n);
    t_str(w, a->critical[n] ? ", \"critical\": true, \"slack_us\": "
                            : ", \"critical\": false, \"slack_us\": ");
    t_num(w, a->slack[n]);
    t_str(w, ", \"cost\": \"");
    t_str(w, rp__source_name((rp_cost_source)a->source[n]));
    t_str(w, "\"}}");
  }
  t_str(w, "\n]}\n");
  t_flush(w);
  int bad = w->bad;
  free(w);
  return bad || ferror(fp) ? RP_EIO : RP_OK;
}

rp_status rp_analysis_write_trace(const rp_analysis *a, FILE *fp) {
  return rp_analysis_write_trace_part(a, fp, 0, a ? a->nop : 0);
}
