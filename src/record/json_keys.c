/* Unknown keys in graph files: a warning naming each (through the
 * reader's warn callback), or an error with RP_READ_STRICT. */
#include <stdio.h>
#include <string.h>
#include "record/json_keys.h"

const char *const rp__keys_top[] = {
    "format", "version", "edges_check", "buffers", "ops", "edges", NULL};
const char *const rp__keys_buffer[] = {"id",   "name", "bytes",
                                       "elem", "dims", NULL};
const char *const rp__keys_op[] = {
    "id",       "name",    "type",    "device",   "src_device", "dst_device",
    "kernel",   "space",   "cost_us", "inserted", "access",     "after",
    "measured", "scalars", "team",    NULL};
const char *const rp__keys_access[] = {"buffer", "space", "mode", "offset",
                                       "bytes",  "box",   NULL};
const char *const rp__keys_box[] = {"lo", "hi", NULL};
const char *const rp__keys_edge[] = {"from", "to", "kind", "buffer", NULL};

rp_status rp__json_key(const rp_read_opts *o, const char *path, const char *key,
                       const char *const *known, char *msg, size_t cap) {
  for (const char *const *k = known; *k; k++)
    if (!strcmp(*k, key))
      return RP_OK;
  if (!o || (!o->warn && !(o->flags & RP_READ_STRICT)))
    return RP_OK;
  char m[256];
  snprintf(m, sizeof m, "%s%s\"%.64s\": unknown key%s", path,
           path[0] ? "." : "", key,
           o->flags & RP_READ_STRICT ? " (strict reading)" : "");
  if (o->flags & RP_READ_STRICT) {
    snprintf(msg, cap, "%s", m);
    return RP_EPARSE;
  }
  o->warn(o->user, m);
  return RP_OK;
}

const char *const rp__json_type_names[5] = {"kernel", "copy_h2d", "copy_d2h",
                                            "copy_d2d", "host"};
const char *const rp__json_mode_names[4] = {"", "in", "out", "inout"};
