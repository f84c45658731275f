/* Machine model: defaults, the calibration file's path, JSON load/save. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "analyze/analysis.h"

void rp_model_init(rp_model *m) {
  if (!m)
    return;
  memset(m, 0, sizeof *m);
  m->h2d.gbps = m->d2h.gbps = m->p2p.gbps = 25;
  for (int d = 0; d < RP_MAX_DEVICES; d++)
    m->phys[d] = -1;
}

const rp_model_mode *rp_model_find_mode(const rp_model *m, const char *name) {
  if (!m || !name)
    return NULL;
  for (unsigned i = 0; i < m->nmode && i < RP_MODEL_MAX_MODES; i++)
    if (!strcmp(m->mode[i].name, name))
      return &m->mode[i];
  return NULL;
}

/* A backend name is a file-name part: letters, digits, '-', '_'. */
static int plain_name(const char *s) {
  if (!s || !*s || strlen(s) > 31)
    return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
      return 0;
  return 1;
}

void rp__host_name(char *h, size_t n) {
  if (gethostname(h, n) != 0 || !h[0])
    snprintf(h, n, "localhost");
  h[n - 1] = 0;
  for (char *c = h; *c; c++)
    if (*c == '/')
      *c = '_';
}

rp_status rp_model_path(const char *backend, char *path, size_t size) {
  RP_ENTER();
  if (!plain_name(backend) || !path || !size)
    return RP_BAD_ARG();
  char host[64];
  rp__host_name(host, sizeof host);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int k;
  if (xdg && xdg[0] == '/')
    k = snprintf(path, size, "%s/reprise/%s-%s.json", xdg, backend, host);
  else if (home && home[0])
    k = snprintf(path, size, "%s/.cache/reprise/%s-%s.json", home, backend,
                 host);
  else
    return RP_ENOTFOUND;
  return k > 0 && (size_t)k < size ? RP_OK : RP_EINVAL;
}

/* mkdir -p of the directory part of path. */
int rp__make_parent(const char *path) {
  char d[4096];
  size_t n = strlen(path);
  if (n >= sizeof d)
    return -1;
  memcpy(d, path, n + 1);
  char *slash = strrchr(d, '/');
  if (!slash || slash == d)
    return 0;
  *slash = 0;
  for (char *p = d + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(d, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  return mkdir(d, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static void put_link(FILE *fp, const char *key, const rp_model_link *l) {
  fprintf(fp, "    \"%s\": {\"gbps\": ", key);
  rp__put_num(fp, l->gbps);
  fprintf(fp, ", \"latency_us\": ");
  rp__put_num(fp, l->latency_us);
  fprintf(fp, "}");
}

rp_status rp_model_write_json(const rp_model *m, FILE *fp) {
  RP_ENTER();
  if (!m || !fp)
    return RP_NULL_ARG();
  fprintf(fp, "{\n  \"format\": \"reprise-model\", \"version\": 1,\n"
              "  \"backend\": ");
  rp__put_json_str(fp, m->backend);
  fprintf(fp, ", \"machine\": ");
  rp__put_json_str(fp, m->machine);
  fprintf(fp, ", \"calibrated\": %s,\n  \"modes\": [",
          m->calibrated ? "true" : "false");
  for (unsigned i = 0; i < m->nmode && i < RP_MODEL_MAX_MODES; i++) {
    const rp_model_mode *md = &m->mode[i];
    fprintf(fp, "%s\n    {\"name\": ", i ? "," : "");
    rp__put_json_str(fp, md->name);
    fprintf(fp, ", \"op_us\": ");
    rp__put_num(fp, md->op_us);
    fprintf(fp, ", \"run_us\": ");
    rp__put_num(fp, md->run_us);
    fprintf(fp, ", \"host_issue\": %s}", md->host_issue ? "true" : "false");
  }
  fprintf(fp, "],\n  \"copy\": {\n");
  put_link(fp, "h2d", &m->h2d);
  fprintf(fp, ",\n");
  put_link(fp, "d2h", &m->d2h);
  fprintf(fp, ",\n");
  put_link(fp, "p2p", &m->p2p);
  fprintf(fp, ",\n    \"duplex\": {\"h2d_gbps\": ");
  rp__put_num(fp, m->duplex_h2d_gbps);
  fprintf(fp, ", \"d2h_gbps\": ");
  rp__put_num(fp, m->duplex_d2h_gbps);
  fprintf(fp, "}\n  },\n  \"host_task_us\": ");
  rp__put_num(fp, m->host_task_us);
  fprintf(fp,
          ",\n  \"physical_devices\": %u, \"multiprocessors\": %u, "
          "\"threads_per_mp\": %u,",
          m->physical_devices, m->multiprocessors, m->threads_per_mp);
  fprintf(fp, "\n  \"split_min\": %llu, \"split_efficiency\": ",
          (unsigned long long)m->split_min);
  rp__put_num(fp, m->split_efficiency);
  fprintf(fp, ",\n  \"key\": {\"cpu\": ");
  rp__put_json_str(fp, m->cpu);
  fprintf(fp, ", \"gpu\": ");
  rp__put_json_str(fp, m->gpu);
  fprintf(fp, ", \"version\": ");
  rp__put_json_str(fp, m->version);
  fprintf(fp, ", \"threads\": %u, \"device_map\": ", m->threads);
  rp__put_json_str(fp, m->device_map);
  fprintf(fp, ", \"load\": ");
  rp__put_num(fp, m->load);
  fprintf(fp, ", \"cpus\": %u", m->cpus);
  fprintf(fp,
          "},\n  \"pool\": {\"host_units\": %u, \"task_us\": ", m->host_units);
  rp__put_num(fp, m->task_us);
  fprintf(fp, ", \"split_us\": ");
  rp__put_num(fp, m->split_us);
  fprintf(fp, ", \"edge_us\": ");
  rp__put_num(fp, m->edge_us);
  fprintf(fp, "},\n  \"memory\": {\"mem1_gbps\": ");
  rp__put_num(fp, m->mem1_gbps);
  fprintf(fp, ", \"mem_gbps\": ");
  rp__put_num(fp, m->mem_gbps);
  fprintf(fp, ", \"cache1_gbps\": ");
  rp__put_num(fp, m->cache1_gbps);
  fprintf(fp, ", \"cache_gbps\": ");
  rp__put_num(fp, m->cache_gbps);
  fprintf(fp, "}");
  fprintf(fp, ",\n  \"devices\": [");
  int last = -1;
  for (int d = 0; d < RP_MAX_DEVICES; d++)
    if (m->units[d] > 1 || m->phys[d] >= 0)
      last = d;
  for (int d = 0; d <= last; d++)
    fprintf(fp, "%s{\"units\": %u, \"physical\": %d}", d ? ", " : "",
            m->units[d], m->phys[d]);
  fprintf(fp, "]\n}\n");
  return ferror(fp) ? RP_EIO : RP_OK;
}

rp_status rp_model_save(const rp_model *m, const char *path) {
  RP_ENTER();
  if (!m || !path)
    return RP_NULL_ARG();
  if (rp__make_parent(path) != 0) {
    rp__set_last_errorf("%s: cannot create its folder: %s", path,
                        strerror(errno));
    return RP_EIO;
  }
  /* An atomic file (core/atomic_file.c): another process reading the
   * cache meanwhile sees the old model or the new one, never half, and a
   * failure keeps the old one; rp_last_error() says why. */
  rp_outfile *f;
  FILE *fp;
  rp_status s = rp_outfile_open(&f, path, &fp);
  if (s != RP_OK)
    return s;
  if ((s = rp_model_write_json(m, fp)) != RP_OK) {
    rp_outfile_abort(f);
    rp__set_last_errorf("%s: write failed", path);
    return s;
  }
  return rp_outfile_commit(f);
}

/* Reading. Every field is optional except format and version; a field of
 * the wrong type or a negative or non-finite figure is refused. */
typedef struct rdm {
  char why[200];
} rdm;

static rp_status fail(rdm *r, const char *fmt, const char *key) {
  snprintf(r->why, sizeof r->why, fmt, key);
  return RP_EPARSE;
}

static rp_status num(rdm *r, const cJSON *o, const char *key, double *out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!j)
    return RP_OK;
  if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble < 0)
    return fail(r, "model: \"%s\" must be a finite number >= 0", key);
  *out = j->valuedouble;
  return RP_OK;
}

static rp_status str(rdm *r, const cJSON *o, const char *key, char *out,
                     size_t n) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!j)
    return RP_OK;
  if (!cJSON_IsString(j) || strlen(j->valuestring) >= n)
    return fail(r, "model: \"%s\" must be a short string", key);
  snprintf(out, n, "%s", j->valuestring);
  return RP_OK;
}

/* An optional whole number in [0, max] (absent: *out unchanged). */
static rp_status whole(rdm *r, const cJSON *o, const char *key, double max,
                       unsigned *out) {
  double v = *out;
  rp_status s = num(r, o, key, &v);
  if (s != RP_OK)
    return s;
  if (v > max || v != floor(v)) {
    snprintf(r->why, sizeof r->why,
             "model: \"%s\" must be an integer up to %.0f", key, max);
    return RP_EPARSE;
  }
  *out = (unsigned)v;
  return RP_OK;
}

static rp_status link_of(rdm *r, const cJSON *o, const char *key,
                         rp_model_link *l) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!j)
    return RP_OK;
  if (!cJSON_IsObject(j))
    return fail(r, "model: copy.%s must be an object", key);
  rp_status s;
  if ((s = num(r, j, "gbps", &l->gbps)) ||
      (s = num(r, j, "latency_us", &l->latency_us)))
    return s;
  return RP_OK;
}

/* The file's format, version, backend and machine. */
static rp_status parse_head(rdm *r, const cJSON *root, rp_model *m) {
  rp_status s;
  if (!cJSON_IsObject(root))
    return fail(r, "model: %s", "expected a JSON object");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsString(f) || strcmp(f->valuestring, "reprise-model"))
    return fail(r, "model: %s", "format is not \"reprise-model\"");
  if (!cJSON_IsNumber(v) || v->valuedouble != 1)
    return fail(r, "model: %s", "version is not 1");
  if ((s = str(r, root, "backend", m->backend, sizeof m->backend)) ||
      (s = str(r, root, "machine", m->machine, sizeof m->machine)))
    return s;
  return RP_OK;
}

/* root's member `key`: *o NULL when it is absent; a failure when it is
 * no object. */
static rp_status object_at(rdm *r, const cJSON *root, const char *key,
                           const cJSON **o) {
  *o = cJSON_GetObjectItemCaseSensitive(root, key);
  if (*o && !cJSON_IsObject(*o))
    return fail(r, "model: \"%s\" must be an object", key);
  return RP_OK;
}

/* "modes": at most RP_MODEL_MAX_MODES, each named. */
static rp_status parse_modes(rdm *r, const cJSON *root, rp_model *m) {
  rp_status s;
  const cJSON *modes = cJSON_GetObjectItemCaseSensitive(root, "modes");
  if (!modes)
    return RP_OK;
  if (!cJSON_IsArray(modes) || cJSON_GetArraySize(modes) > RP_MODEL_MAX_MODES)
    return fail(r, "model: \"%s\" must be an array of at most 4 modes",
                "modes");
  m->nmode = 0;
  for (const cJSON *c = modes->child; c; c = c->next) {
    rp_model_mode *md = &m->mode[m->nmode++];
    memset(md, 0, sizeof *md);
    if (!cJSON_IsObject(c))
      return fail(r, "model: %s", "a mode must be an object");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(c, "host_issue");
    if ((s = str(r, c, "name", md->name, sizeof md->name)) ||
        (s = num(r, c, "op_us", &md->op_us)) ||
        (s = num(r, c, "run_us", &md->run_us)))
      return s;
    if (!md->name[0])
      return fail(r, "model: %s", "a mode needs a name");
    if (hi && !cJSON_IsBool(hi))
      return fail(r, "model: \"%s\" must be a boolean", "host_issue");
    md->host_issue = cJSON_IsTrue(hi);
  }
  return RP_OK;
}

/* "copy": the links, and both directions at once ("duplex"). */
static rp_status parse_copy(rdm *r, const cJSON *root, rp_model *m) {
  const cJSON *copy;
  rp_status s = object_at(r, root, "copy", &copy);
  if (s || !copy)
    return s;
  if ((s = link_of(r, copy, "h2d", &m->h2d)) ||
      (s = link_of(r, copy, "d2h", &m->d2h)) ||
      (s = link_of(r, copy, "p2p", &m->p2p)))
    return s;
  const cJSON *dup = cJSON_GetObjectItemCaseSensitive(copy, "duplex");
  if (dup && ((s = num(r, dup, "h2d_gbps", &m->duplex_h2d_gbps)) ||
              (s = num(r, dup, "d2h_gbps", &m->duplex_d2h_gbps))))
    return s;
  return RP_OK;
}

/* The top-level figures: the devices' shape, host tasks, splitting. */
static rp_status parse_figures(rdm *r, const cJSON *root, rp_model *m) {
  rp_status s;
  double split = (double)m->split_min;
  if ((s = whole(r, root, "physical_devices", RP_MAX_DEVICES,
                 &m->physical_devices)) ||
      (s = whole(r, root, "multiprocessors", 65536, &m->multiprocessors)) ||
      (s = whole(r, root, "threads_per_mp", 65536, &m->threads_per_mp)))
    return s;
  if ((s = num(r, root, "host_task_us", &m->host_task_us)) ||
      (s = num(r, root, "split_min", &split)) ||
      (s = num(r, root, "split_efficiency", &m->split_efficiency)))
    return s;
  if (m->split_efficiency > 1)
    return fail(r, "model: \"%s\" is at most 1", "split_efficiency");
  if (split > 9007199254740992.0)
    return fail(r, "model: \"%s\" is too large", "split_min");
  m->split_min = (uint64_t)split;
  return RP_OK;
}

/* "key" (what the cache is keyed on), "pool" (a team's costs), "memory"
 * (its bandwidths). */
static rp_status parse_key_pool_memory(rdm *r, const cJSON *root, rp_model *m) {
  const cJSON *key, *pool, *mem;
  rp_status s;
  if ((s = object_at(r, root, "key", &key)))
    return s;
  if (key) {
    if ((s = str(r, key, "cpu", m->cpu, sizeof m->cpu)) ||
        (s = str(r, key, "gpu", m->gpu, sizeof m->gpu)) ||
        (s = str(r, key, "version", m->version, sizeof m->version)) ||
        (s = str(r, key, "device_map", m->device_map, sizeof m->device_map)) ||
        (s = whole(r, key, "threads", 4096, &m->threads)) ||
        (s = num(r, key, "load", &m->load)) ||
        (s = whole(r, key, "cpus", 65536, &m->cpus)))
      return s;
  }
  if ((s = object_at(r, root, "pool", &pool)))
    return s;
  if (pool) {
    if ((s = whole(r, pool, "host_units", 4096, &m->host_units)) ||
        (s = num(r, pool, "task_us", &m->task_us)) ||
        (s = num(r, pool, "split_us", &m->split_us)) ||
        (s = num(r, pool, "edge_us", &m->edge_us)))
      return s;
  }
  if ((s = object_at(r, root, "memory", &mem)))
    return s;
  if (mem) {
    if ((s = num(r, mem, "mem1_gbps", &m->mem1_gbps)) ||
        (s = num(r, mem, "mem_gbps", &m->mem_gbps)) ||
        (s = num(r, mem, "cache1_gbps", &m->cache1_gbps)) ||
        (s = num(r, mem, "cache_gbps", &m->cache_gbps)))
      return s;
  }
  return RP_OK;
}

/* "devices": per device its units and the physical device it is. */
static rp_status parse_devices(rdm *r, const cJSON *root, rp_model *m) {
  rp_status s = RP_OK;
  const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices");
  if (!devs)
    return RP_OK;
  if (!cJSON_IsArray(devs) || cJSON_GetArraySize(devs) > RP_MAX_DEVICES)
    return fail(r, "model: \"%s\" must be an array, one per device", "devices");
  int d = 0;
  for (const cJSON *c = devs->child; c; c = c->next, d++) {
    double u = 1, p = -1;
    const cJSON *pj = cJSON_GetObjectItemCaseSensitive(c, "physical");
    if (!cJSON_IsObject(c) || (s = num(r, c, "units", &u)))
      return s ? s : fail(r, "model: %s", "a device must be an object");
    if (pj) {
      if (!cJSON_IsNumber(pj) || pj->valuedouble < -1 ||
          pj->valuedouble >= RP_MAX_DEVICES ||
          pj->valuedouble != floor(pj->valuedouble))
        return fail(r, "model: \"%s\" must be -1 or a device index",
                    "physical");
      p = pj->valuedouble;
    }
    if (u > 4096 || u != floor(u))
      return fail(r, "model: \"%s\" must be an integer up to 4096", "units");
    m->units[d] = (unsigned)u;
    m->phys[d] = (int)p;
  }
  return RP_OK;
}

static rp_status parse(rdm *r, const cJSON *root, rp_model *m) {
  rp_status s;
  if ((s = parse_head(r, root, m)) || (s = parse_modes(r, root, m)) ||
      (s = parse_copy(r, root, m)) || (s = parse_figures(r, root, m)) ||
      (s = parse_key_pool_memory(r, root, m)) ||
      (s = parse_devices(r, root, m)))
    return s;
  m->calibrated = 1;
  return RP_OK;
}

rp_status rp_model_load(rp_model *m, const char *path) {
  RP_ENTER();
  if (!m || !path)
    return RP_NULL_ARG();
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    rp__set_last_error("model: cannot open the file");
    return RP_EIO;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap + 1);
  rp_status s = RP_ENOMEM;
  while (buf) {
    size_t k = fread(buf + len, 1, cap - len, fp);
    len += k;
    if (len < cap)
      break;
    if (cap >= (1u << 24)) { /* a model is a few hundred bytes */
      free(buf);
      buf = NULL;
      s = RP_EPARSE;
      break;
    }
    char *nb = realloc(buf, cap * 2 + 1);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  int err = ferror(fp);
  fclose(fp);
  if (!buf)
    return s;
  if (err) {
    free(buf);
    return RP_EIO;
  }
  buf[len] = 0;
  cJSON *root = cJSON_Parse(buf);
  free(buf);
  rdm r = {""};
  rp_model tmp;
  rp_model_init(&tmp);
  if (!root)
    s = fail(&r, "model: %s", "not valid JSON");
  else
    s = parse(&r, root, &tmp);
  cJSON_Delete(root);
  if (s != RP_OK) {
    rp__set_last_error(r.why);
    return s;
  }
  *m = tmp;
  return RP_OK;
}

static int ok_num(double x) { return isfinite(x) && x >= 0; }

int rp__model_valid(const rp_model *m) {
  if (m->nmode > RP_MODEL_MAX_MODES)
    return 0;
  for (unsigned i = 0; i < m->nmode; i++)
    if (!ok_num(m->mode[i].op_us) || !ok_num(m->mode[i].run_us))
      return 0;
  const rp_model_link *l[3] = {&m->h2d, &m->d2h, &m->p2p};
  for (int i = 0; i < 3; i++)
    if (!ok_num(l[i]->gbps) || !ok_num(l[i]->latency_us))
      return 0;
  if (!ok_num(m->duplex_h2d_gbps) || !ok_num(m->duplex_d2h_gbps) ||
      !ok_num(m->host_task_us) || !ok_num(m->split_efficiency) ||
      m->split_efficiency > 1 || m->multiprocessors > 65536 ||
      m->threads_per_mp > 65536 || !ok_num(m->task_us) ||
      !ok_num(m->split_us) || !ok_num(m->edge_us) || !ok_num(m->mem1_gbps) ||
      !ok_num(m->mem_gbps) || !ok_num(m->cache1_gbps) ||
      !ok_num(m->cache_gbps) || m->host_units > 4096 || !ok_num(m->load))
    return 0;
  for (int d = 0; d < RP_MAX_DEVICES; d++)
    if (m->units[d] > 4096 || m->phys[d] < -1 || m->phys[d] >= RP_MAX_DEVICES)
      return 0;
  return 1;
}
