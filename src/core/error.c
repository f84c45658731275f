/* Names and messages of statuses; the calling thread's error text. */
#include <stdarg.h>
#include <stdio.h>
#include "core/core.h"

static _Thread_local char last_error[512];

const char *rp_strerror(rp_status s) {
  switch (s) {
#define RP__X(name, code, msg)                                                 \
  case RP_##name:                                                              \
    return msg;
    RP_STATUS_MAP(RP__X)
#undef RP__X
  }
  return "unknown status";
}

const char *rp_status_name(rp_status s) {
  switch (s) {
#define RP__X(name, code, msg)                                                 \
  case RP_##name:                                                              \
    return "RP_" #name;
    RP_STATUS_MAP(RP__X)
#undef RP__X
  }
  return "RP_UNKNOWN";
}

const char *rp_version(void) { return RP_VERSION_STRING; }

const char *rp_last_error(void) { return last_error; }

/* Internal (hidden): plugins report through rp_backend_set_error(). */
void rp__set_last_error(const char *msg) {
  snprintf(last_error, sizeof last_error, "%s", msg ? msg : "");
}

void rp__clear_last_error(void) { last_error[0] = 0; }

void rp__set_last_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

rp_status rp__null_arg(const char *fn) {
  rp__set_last_errorf("%s: a required argument is NULL", fn);
  return RP_EINVAL;
}

rp_status rp__bad_arg(const char *fn) {
  rp__set_last_errorf("%s: invalid argument (NULL, or an index out of "
                      "range)",
                      fn);
  return RP_EINVAL;
}
