/* Failures reported by kernels' CPU bodies and host tasks while they run:
 * a thread-local slot the body fills and the backend takes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "replay/exec.h"

static _Thread_local int fail_code;
static _Thread_local char fail_msg[256];

void rp_task_fail(int code, const char *fmt, ...) {
  if (fail_code)
    return;
  fail_code = code ? code : -1;
  fail_msg[0] = 0;
  if (!fmt)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fail_msg, sizeof fail_msg, fmt, ap);
  va_end(ap);
}

int rp_task_take_failure(char *msg, size_t n) {
  int c = fail_code;
  if (c && msg && n)
    snprintf(msg, n, "%s", fail_msg);
  fail_code = 0;
  fail_msg[0] = 0;
  return c;
}

rp_status rp_exec_fail_task(rp_exec *x, uint32_t node, unsigned replay,
                            int code, const char *msg) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  const rp_plan *p = rp_exec_plan(x);
  rp_node op = p && node < p->nnode ? p->node[node].op : RP_NONE;
  rp_node_info ni = {0};
  if (op == RP_NONE || rp_node_info_get(x->g, op, &ni) != RP_OK)
    ni.name = "?";
  rp_exec_set_error(x,
                    "op %u \"%s\" failed in replay %u of the launch "
                    "(code %d): %s",
                    op, ni.name, replay + 1, code, msg ? msg : "");
  return RP_ETASK;
}
