/* Names and messages of statuses, operation types and edge kinds. */
#include <stdio.h>
#include "record/graph.h"

static _Thread_local char last_error[512];

const char *rp_strerror(rp_status s) {
  switch (s) {
#define RP__X(name, code, msg) \
  case RP_##name:              \
    return msg;
    RP_STATUS_MAP(RP__X)
#undef RP__X
  }
  return "unknown status";
}

const char *rp_status_name(rp_status s) {
  switch (s) {
#define RP__X(name, code, msg) \
  case RP_##name:              \
    return "RP_" #name;
    RP_STATUS_MAP(RP__X)
#undef RP__X
  }
  return "RP_UNKNOWN";
}

const char *rp_version(void) { return RP_VERSION_STRING; }

const char *rp_last_error(void) { return last_error; }

/* Exported for plugins, which link against the shared library. */
RP_API void rp__set_last_error(const char *msg) {
  snprintf(last_error, sizeof last_error, "%s", msg ? msg : "");
}

const char *rp_op_type_name(rp_op_type t) {
  static const char *const names[] = {"kernel", "copy_h2d", "copy_d2h",
                                      "copy_d2d", "host"};
  return (unsigned)t < 5 ? names[t] : "unknown";
}

const char *rp_edge_kind_name(rp_edge_kind k) {
  static const char *const names[] = {"raw", "war", "waw", "after"};
  return (unsigned)k < 4 ? names[k] : "unknown";
}
