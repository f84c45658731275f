/* Graphviz drawings that stay readable beyond a few dozen operations:
 * clusters by step, one node per group of like operations, merged edges
 * with the hazards in their tooltips, a colour per lane and a legend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "record/dot.h"

/* Steps drawn one by one; beyond, the first FIRST_STEPS and the last
 * LAST_STEPS, the ones between as one node. */
enum { MAX_STEPS = 10, FIRST_STEPS = 3, LAST_STEPS = 2 };
/* Groups of one lane in a step; beyond, grouped across lanes. */
enum { MAX_GROUPS = 6 };
/* Lane kinds (rp__dot_extra.lane_kind). */
enum { K_COMPUTE, K_H2D, K_D2H, K_COPY, K_P2P, K_HOST, K_KINDS };

const char *rp__dot_colour(int kind, unsigned k) {
  static const char *const pal[K_KINDS][4] = {
      {"#9ecae1", "#6baed6", "#4292c6", "#c6dbef"},  /* compute: blues */
      {"#a1d99b", "#74c476", "#41ab5d", "#c7e9c0"},  /* h2d: greens */
      {"#fdae6b", "#fd8d3c", "#f16913", "#fdd0a2"},  /* d2h: oranges */
      {"#99d8c9", "#66c2a4", "#41ae76", "#ccece6"},  /* copy: teals */
      {"#bcbddc", "#9e9ac8", "#807dba", "#dadaeb"},  /* p2p: purples */
      {"#d9d9d9", "#bdbdbd", "#969696", "#f0f0f0"}}; /* host: greys */
  return kind >= 0 && kind < K_KINDS ? pal[kind][k % 4] : "#ffffff";
}

static const char *const kind_what[K_KINDS] = {
    "kernels",          "copies host to device", "copies device to host",
    "copies both ways", "peer copies",           "host tasks"};

/* The lane kind of an operation of the graph alone. */
static int op_kind(const rp__op *o) {
  switch ((rp_op_type)o->type) {
  case RP_OP_KERNEL:
    return K_COMPUTE;
  case RP_OP_COPY_H2D:
    return K_H2D;
  case RP_OP_COPY_D2H:
    return K_D2H;
  case RP_OP_COPY_D2D:
    return K_P2P;
  default:
    return K_HOST;
  }
}

/* Writes s inside a dot string ("..."). */
static void put_str(FILE *fp, const char *s, size_t n) {
  for (size_t i = 0; i < n && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(fp, "\\%c", c);
    else
      fputc(c < 0x20 || c == 0x7f ? ' ' : c, fp);
  }
}

/* Writes s inside an HTML-like label. */
static void put_html(FILE *fp, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '<')
      fputs("&lt;", fp);
    else if (c == '>')
      fputs("&gt;", fp);
    else if (c == '&')
      fputs("&amp;", fp);
    else if (c == '"')
      fputs("&quot;", fp);
    else
      fputc(c < 0x20 || c == 0x7f ? ' ' : c, fp);
  }
}

/* A time for a label: 4 significant digits at most. */
static void put_us(FILE *fp, double v) {
  if (!isfinite(v)) {
    fputs("?", fp);
    return;
  }
  double m = fabs(v);
  if (m >= 1000) {
    fprintf(fp, "%.0f", v);
    return;
  }
  char b[32];
  snprintf(b, sizeof b, "%.*f", m >= 100 ? 1 : m >= 10 ? 2 : 3, v);
  char *e = b + strlen(b) - 1;
  while (*e == '0')
    *e-- = 0;
  if (*e == '.')
    *e = 0;
  fputs(strcmp(b, "-0") ? b : "0", fp);
}

/* The drawing's lanes: the analysis' or, for the graph alone, one per
 * (kind, device) as the analysis would name them. */
typedef struct lanes {
  uint32_t *of; /* per op */
  char (*name)[24];
  int *kind;
  const char **colour;
  uint32_t n;
} lanes;

static void lanes_free(lanes *l) {
  free(l->of);
  free(l->name);
  free(l->kind);
  free(l->colour);
}

static rp_status lanes_build(const rp_graph *g, const rp__dot_extra *x,
                             lanes *l) {
  memset(l, 0, sizeof *l);
  uint32_t cap = x && x->lane ? x->nlane : 5 * (RP_MAX_DEVICES + 1);
  l->of = malloc(sizeof *l->of * (g->nop ? g->nop : 1));
  l->name = calloc(cap ? cap : 1, sizeof *l->name);
  l->kind = calloc(cap ? cap : 1, sizeof *l->kind);
  l->colour = calloc(cap ? cap : 1, sizeof *l->colour);
  if (!l->of || !l->name || !l->kind || !l->colour)
    return RP_ENOMEM;
  unsigned seen[K_KINDS] = {0};
  if (x && x->lane) {
    /* The analysis' lanes of one device ("compute:0.0", "compute:0.1":
     * its compute units) are drawn as one, "compute:0". */
    uint32_t *fam = malloc(sizeof *fam * (x->nlane ? x->nlane : 1));
    if (!fam)
      return RP_ENOMEM;
    for (uint32_t i = 0; i < x->nlane; i++) {
      char nm[24];
      snprintf(nm, sizeof nm, "%s", x->lane_name[i]);
      char *dot = strchr(nm, '.');
      if (dot)
        *dot = '\0';
      uint32_t f = 0;
      while (f < l->n && strcmp(l->name[f], nm))
        f++;
      if (f == l->n) {
        snprintf(l->name[f], sizeof l->name[f], "%s", nm);
        l->kind[f] = x->lane_kind[i];
        l->colour[f] = rp__dot_colour(l->kind[f], seen[l->kind[f] % K_KINDS]++);
        l->n++;
      }
      fam[i] = f;
    }
    for (uint32_t n = 0; n < g->nop; n++)
      l->of[n] = fam[x->lane[n]];
    free(fam);
    return RP_OK;
  }
  uint32_t idx[K_KINDS][RP_MAX_DEVICES + 1];
  memset(idx, 0xff, sizeof idx);
  for (uint32_t n = 0; n < g->nop; n++) {
    const rp__op *o = &g->op[n];
    int k = op_kind(o);
    unsigned d = k == K_HOST ? RP_MAX_DEVICES : (unsigned)o->device;
    if (idx[k][d] == RP_NONE) {
      static const char *const pre[K_KINDS] = {"compute", "h2d", "d2h",
                                               "copy",    "p2p", "host"};
      uint32_t i = idx[k][d] = l->n++;
      if (k == K_HOST)
        snprintf(l->name[i], sizeof l->name[i], "host");
      else
        snprintf(l->name[i], sizeof l->name[i], "%s:%u", pre[k], d);
      l->kind[i] = k;
      l->colour[i] = rp__dot_colour(k, k == K_HOST ? 0 : d);
    }
    l->of[n] = idx[k][d];
  }
  return RP_OK;
}

/* The legend: a colour per lane present, what the edges and shapes mean. */
static void legend(FILE *fp, const lanes *l, const uint8_t *used, int grouped,
                   int timed) {
  fputs("  legend [shape=plaintext, fontsize=9, label=<<TABLE BORDER=\"0\" "
        "CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">"
        "<TR><TD COLSPAN=\"2\"><B>legend</B></TD></TR>\n",
        fp);
  /* A row per kind of lane: a swatch per lane, their names. */
  for (int k = 0; k < K_KINDS; k++) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->n; i++)
      n += l->kind[i] == k && (!used || used[i]);
    if (!n)
      continue;
    fputs("    <TR><TD><TABLE BORDER=\"0\" CELLSPACING=\"1\" "
          "CELLPADDING=\"0\"><TR>",
          fp);
    for (uint32_t i = 0, j = 0; i < l->n && j < 8; i++)
      if (l->kind[i] == k && (!used || used[i]) && ++j)
        fprintf(fp, "<TD BGCOLOR=\"%s\" WIDTH=\"9\" HEIGHT=\"9\"></TD>",
                l->colour[i]);
    fputs("</TR></TABLE></TD><TD ALIGN=\"LEFT\">", fp);
    for (uint32_t i = 0, j = 0; i < l->n; i++)
      if (l->kind[i] == k && (!used || used[i])) {
        const char *nm = l->name[i], *c = strchr(nm, ':');
        if (j++ == 8) {
          fputs(", ...", fp);
          break;
        }
        if (j > 1)
          fputs(", ", fp);
        put_html(fp, j > 1 && c ? c + 1 : nm);
      }
    fprintf(fp, ": %s</TD></TR>\n", kind_what[k]);
  }
  fputs("    <TR><TD>&#8594;</TD><TD ALIGN=\"LEFT\">waits for: RAW, WAR or "
        "WAW on a buffer; dashed: after</TD></TR>\n",
        fp);
  fputs("    <TR><TD STYLE=\"dashed\">  </TD><TD ALIGN=\"LEFT\">dashed "
        "border: copy inserted by coherence</TD></TR>\n",
        fp);
  if (timed)
    fputs("    <TR><TD><B>bold</B></TD><TD ALIGN=\"LEFT\">the critical "
          "path</TD></TR>\n",
          fp);
  if (grouped)
    fputs("    <TR><TD>&#215;N</TD><TD ALIGN=\"LEFT\">N operations of one "
          "name and lane in a step; edges merged: the hazards are in the "
          "tooltips (SVG)</TD></TR>\n",
          fp);
  fputs("  </TABLE>>];\n", fp);
}

void rp__dot_legend(const rp_graph *g, const rp__dot_extra *x, FILE *fp) {
  lanes l;
  if (lanes_build(g, x, &l) == RP_OK) {
    uint8_t *used = calloc(l.n ? l.n : 1, 1);
    for (uint32_t n = 0; used && n < g->nop; n++)
      used[l.of[n]] = 1;
    if (!x || !x->lane) /* the detailed drawing's own colours */
      for (uint32_t i = 0; i < l.n; i++) {
        unsigned d = 0;
        sscanf(l.name[i], "%*[^:]:%u", &d);
        l.colour[i] = rp__dot_colour(l.kind[i], l.kind[i] == K_HOST ? 0 : d);
      }
    legend(fp, &l, used, 0, x && x->start);
    free(used);
  }
  lanes_free(&l);
}

/* --- steps and groups --------------------------------------------------- */

/* The length of op n's name without a trailing number ("jacobi 3" ->
 * "jacobi"): operations of one loop body differ only there. */
static size_t base_len(const char *s) {
  size_t n = strlen(s), k = n;
  while (k && s[k - 1] >= '0' && s[k - 1] <= '9')
    k--;
  if (k < n && k && (s[k - 1] == ' ' || s[k - 1] == '#' || s[k - 1] == '_'))
    return k - 1;
  return n;
}

static const char *op_name(const rp_graph *g, uint32_t n) {
  return g->op[n].name ? g->op[n].name : "";
}

/* Equal but for their runs of digits ("peer U 1->0" and "peer U 2->1"). */
static int same_but_numbers(const char *x, const char *y) {
  for (;;) {
    int dx = *x >= '0' && *x <= '9', dy = *y >= '0' && *y <= '9';
    if (dx != dy)
      return 0;
    if (dx) {
      while (*x >= '0' && *x <= '9')
        x++;
      while (*y >= '0' && *y <= '9')
        y++;
      continue;
    }
    if (*x != *y)
      return 0;
    if (!*x)
      return 1;
    x++, y++;
  }
}

static int same_base(const rp_graph *g, uint32_t a, uint32_t b) {
  const char *x = g->op[a].name ? g->op[a].name : "";
  const char *y = g->op[b].name ? g->op[b].name : "";
  size_t nx = base_len(x), ny = base_len(y);
  return nx == ny && !memcmp(x, y, nx);
}

/* Steps: a new one starts at an operation the program recorded (not a
 * copy coherence inserted) that (a) bears the name the current step began
 * with, after operations of other names, or (b) depends directly on an
 * operation of the current step with its own name (a loop of one kernel:
 * round 2 of a block waits for round 1). An inserted copy belongs to the
 * step of the operation it serves, the next recorded one. Returns the
 * number of steps. */
static uint32_t find_steps(const rp_graph *g, uint32_t *step) {
  uint32_t cur = 0, head = RP_NONE, prev = RP_NONE, pending = 0;
  for (uint32_t u = 0; u < g->nop; u++) {
    if (g->op[u].inserted) {
      pending++;
      continue;
    }
    int split = 0;
    if (head == RP_NONE) {
      head = u;
    } else if (same_base(g, u, head) && !same_base(g, prev, head)) {
      split = 1;
    } else if (g->ended) {
      uint32_t k;
      const rp_node *p = rp_graph_preds(g, u, &k);
      for (uint32_t i = 0; i < k && !split; i++)
        split = !g->op[p[i]].inserted && step[p[i]] == cur &&
                same_base(g, p[i], u); /* inserted ones have no step yet */
    }
    if (split) {
      cur++;
      head = u;
    }
    for (uint32_t v = u - pending; v <= u; v++)
      step[v] = cur;
    pending = 0;
    prev = u;
  }
  for (uint32_t v = g->nop - pending; v < g->nop; v++)
    step[v] = cur;
  return g->nop ? cur + 1 : 0;
}

typedef struct grp {
  uint32_t first, last, count, step, lane, inner;
  uint32_t pre, suf;         /* the names' common prefix and suffix, in bytes of
                        the first's (names differing only in numbers) */
  uint32_t lanes[4], nlanes; /* its lanes, the first four */
  uint32_t per;   /* ops in one step (a run of alike steps: count / steps) */
  uint32_t steps; /* steps it stands for */
  double t0, t1;
  uint8_t crit, inserted, collapsed;
} grp;

/* Ops a and b go in one group: one type, both inserted or neither, and
 * a kernel of one name, or a copy or host task named the same but for
 * its numbers. */
static int same_key(const rp_graph *g, uint32_t a, uint32_t b) {
  const rp__op *x = &g->op[a], *y = &g->op[b];
  if (x->type != y->type || x->inserted != y->inserted)
    return 0;
  if (x->type == RP_OP_KERNEL) {
    const char *kx = rp_node_kernel_name(g, a), *ky = rp_node_kernel_name(g, b);
    return same_base(g, a, b) && (kx == ky || (kx && ky && !strcmp(kx, ky)));
  }
  return same_but_numbers(op_name(g, a), op_name(g, b));
}

/* Adds op n (on lane) to group a. */
static void grp_add(grp *a, const rp_graph *g, uint32_t n, uint32_t lane,
                    const rp__dot_extra *x) {
  const char *f = op_name(g, a->first), *s = op_name(g, n);
  size_t lf = strlen(f), ls = strlen(s), p = 0, q = 0;
  while (p < a->pre && p < ls && f[p] == s[p])
    p++;
  while (q < a->suf && q < ls && q < lf && f[lf - 1 - q] == s[ls - 1 - q])
    q++;
  a->pre = (uint32_t)p;
  a->suf = (uint32_t)q;
  uint32_t i = 0;
  while (i < a->nlanes && i < 4 && a->lanes[i] != lane)
    i++;
  if (i == a->nlanes) {
    if (i < 4)
      a->lanes[i] = lane;
    a->nlanes++;
  }
  a->last = n;
  a->count++;
  if (x && x->start) {
    a->t0 = fmin(a->t0, x->start[n]);
    a->t1 = fmax(a->t1, x->end[n]);
  }
  if (x && x->critical && x->critical[n])
    a->crit = 1;
}

typedef struct pedge {
  uint32_t f, t;            /* groups */
  uint8_t kind, crit, next; /* next: into the next step of a run */
  uint32_t buf;
} pedge;

static int pedge_cmp(const void *x, const void *y) {
  const pedge *a = x, *b = y;
  if (a->f != b->f)
    return a->f < b->f ? -1 : 1;
  if (a->t != b->t)
    return a->t < b->t ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  return a->buf < b->buf ? -1 : a->buf > b->buf;
}

/* Does step s have the groups of step r (names, types, lanes, counts)? */
static int like(const rp_graph *g, const grp *gr, const uint32_t *s0,
                uint32_t s, uint32_t r) {
  if (s0[s + 1] - s0[s] != s0[r + 1] - s0[r])
    return 0;
  for (uint32_t i = 0; i < s0[s + 1] - s0[s]; i++) {
    const grp *a = &gr[s0[s] + i], *b = &gr[s0[r] + i];
    if (a->count != b->count || a->lane != b->lane || a->nlanes != b->nlanes ||
        !same_key(g, a->first, b->first))
      return 0;
  }
  return 1;
}

static const char *const kind_up[4] = {"RAW", "WAR", "WAW", "after"};

/* How group_text() writes. */
enum { T_LABEL, T_TIP, T_HTML };

/* Text of n bytes of s, for a dot string or an HTML-like label. */
static void put_t(FILE *fp, int how, const char *s, size_t n) {
  if (how != T_HTML) {
    put_str(fp, s, n);
    return;
  }
  char b[256];
  snprintf(b, sizeof b, "%.*s", (int)(n < 255 ? n : 255), s);
  put_html(fp, b);
}

/* The label (or tooltip) of a group; a collapsed one spans steps
 * [from, to] (numbered from 1). */
static void group_text(FILE *fp, const rp_graph *g, const grp *a,
                       const lanes *l, const rp__dot_extra *x, int how,
                       uint32_t from, uint32_t to) {
  const char *nm = op_name(g, a->first);
  const char *nl = how == T_HTML ? "<BR/>" : "\\n";
  if (a->collapsed) {
    fprintf(fp, "steps %u to %u%s%u operations", from, to, nl, a->count);
  } else if (a->count == 1 || (a->steps > 1 && a->per == 1)) {
    if (a->count == 1)
      fprintf(fp, "#%u ", a->first);
    put_t(fp, how, nm, strlen(nm));
  } else {
    size_t len = strlen(nm);
    if (a->pre >= len) {
      put_t(fp, how, nm, len);
    } else { /* the names differ in their numbers */
      put_t(fp, how, nm, a->pre);
      fputs("\xe2\x80\xa6", fp);
      put_t(fp, how, nm + len - a->suf, a->suf);
    }
    fprintf(fp, " \xc3\x97%u", a->steps > 1 ? a->per : a->count);
    if (a->steps > 1)
      fprintf(fp, " per step");
  }
  if (a->count > 1)
    fprintf(fp, "%s#%u .. #%u", nl, a->first, a->last);
  if (x && x->start) {
    fputs(nl, fp);
    put_us(fp, a->t0);
    fputs(" .. ", fp);
    put_us(fp, a->t1);
    fputs(" us", fp);
  }
  if (how == T_TIP && !a->collapsed) {
    fprintf(fp, "%s%s%s on ", nl,
            rp_op_type_name((rp_op_type)g->op[a->first].type),
            a->count > 1 ? "s" : "");
    for (uint32_t i = 0; i < a->nlanes && i < 4; i++) {
      fputs(i ? ", " : "", fp);
      put_str(fp, l->name[a->lanes[i]], SIZE_MAX);
    }
    if (a->nlanes > 4)
      fprintf(fp, " and %u more lanes", a->nlanes - 4);
  }
  if (how == T_TIP && a->inner)
    fprintf(fp, "%s%u edges among these operations", nl, a->inner);
}

/* rp__dot_grouped's state, shared by its steps. */
typedef struct dg {
  const rp_graph *g;
  const rp__dot_extra *x;
  FILE *fp;
  uint32_t nop, m;
  lanes l;
  uint32_t *step;  /* per op: its step */
  uint32_t *gof;   /* per op: its group (after folding: the run's) */
  grp *gr;         /* the groups, and gr[ng]: the collapsed runs */
  uint32_t *nextc; /* per op: the next op on the critical path */
  pedge *pe;       /* edges between groups */
  uint32_t npe;
  uint8_t *used; /* per lane: drawn */
  uint32_t *s0;  /* per step: its first group */
  uint32_t *r0;  /* per run of alike steps: its first step */
  uint32_t *rep; /* per group: the group it folds into */
  uint32_t nstep, ng, nrun, mid0, mid1;
} dg;

/* Steps, then groups: within a step, the ops of one base name, type,
 * lane and kind (inserted or not). Steps never decrease in program
 * order, so a step's groups are contiguous. Step by step: groups of one
 * lane first; a step with more than MAX_GROUPS of them (several devices)
 * is grouped again across lanes. */
static rp_status dg_group(dg *d) {
  const rp_graph *g = d->g;
  grp *gr = d->gr;
  d->nstep = find_steps(g, d->step);
  if (!(d->s0 = calloc(d->nstep + 2, sizeof *d->s0)))
    return RP_ENOMEM;
  uint32_t ng = 0, *s0 = d->s0;
  for (uint32_t n0 = 0, cur = 0; n0 < d->nop; cur++) {
    uint32_t n1 = n0;
    while (n1 < d->nop && d->step[n1] == cur)
      n1++;
    s0[cur] = ng;
    for (int by_lane = 1; by_lane >= 0; by_lane--) {
      ng = s0[cur];
      for (uint32_t n = n0; n < n1; n++) {
        uint32_t k = s0[cur];
        while (k < ng && !((!by_lane || gr[k].lane == d->l.of[n]) &&
                           same_key(g, gr[k].first, n)))
          k++;
        if (k == ng) {
          memset(&gr[k], 0, sizeof gr[k]);
          gr[k].first = n;
          gr[k].step = cur;
          gr[k].lane = d->l.of[n];
          gr[k].inserted = g->op[n].inserted;
          gr[k].pre = gr[k].suf = (uint32_t)strlen(op_name(g, n));
          gr[k].t0 = INFINITY;
          gr[k].t1 = -INFINITY;
          ng++;
        }
        grp_add(&gr[k], g, n, d->l.of[n], d->x);
        d->gof[n] = k;
        d->used[d->l.of[n]] = 1;
      }
      if (ng - s0[cur] <= MAX_GROUPS)
        break;
    }
    n0 = n1;
  }
  s0[d->nstep] = ng;
  for (uint32_t k = 0; k < ng; k++) {
    gr[k].per = gr[k].count;
    gr[k].steps = 1;
  }
  d->ng = ng;
  return RP_OK;
}

/* Runs of alike steps (the same groups, counts and lanes: the loop's
 * iterations) are drawn once: step s joins the run of step s - 1 when
 * it is like it; its groups fold into the run's first step's. */
static rp_status dg_fold(dg *d) {
  grp *gr = d->gr;
  const uint32_t *s0 = d->s0;
  if (!(d->r0 = calloc(d->nstep + 2, sizeof *d->r0)) ||
      !(d->rep = malloc(sizeof *d->rep * (d->ng + 1))))
    return RP_ENOMEM;
  uint32_t nrun = 0, *r0 = d->r0, *rep = d->rep;
  for (uint32_t s = 0; s < d->nstep; s++) {
    if (!s || !like(d->g, gr, s0, s, s - 1)) {
      r0[nrun++] = s;
      for (uint32_t k = s0[s]; k < s0[s + 1]; k++)
        rep[k] = k;
      continue;
    }
    uint32_t f = r0[nrun - 1];
    for (uint32_t k = s0[s]; k < s0[s + 1]; k++) {
      grp *a = &gr[s0[f] + (k - s0[s])];
      rep[k] = (uint32_t)(a - gr);
      a->count += gr[k].count;
      a->last = gr[k].last > a->last ? gr[k].last : a->last;
      a->t0 = fmin(a->t0, gr[k].t0);
      a->t1 = fmax(a->t1, gr[k].t1);
      a->crit |= gr[k].crit;
      a->steps++;
    }
  }
  r0[nrun] = d->nstep;
  for (uint32_t n = 0; n < d->nop; n++)
    d->gof[n] = rep[d->gof[n]];
  d->nrun = nrun;
  return RP_OK;
}

/* Many runs: the middle ones as one node, gr[ng]. */
static void dg_collapse(dg *d) {
  grp *gr = d->gr;
  const uint32_t *s0 = d->s0, *r0 = d->r0;
  uint32_t ng = d->ng;
  d->mid0 = d->mid1 = d->nrun;
  if (d->nrun <= MAX_STEPS)
    return;
  uint32_t mid0 = d->mid0 = FIRST_STEPS, mid1 = d->mid1 = d->nrun - LAST_STEPS;
  grp *c = &gr[ng];
  memset(c, 0, sizeof *c);
  c->collapsed = 1;
  c->first = gr[s0[r0[mid0]]].first;
  c->lane = RP_NONE;
  c->t0 = INFINITY;
  c->t1 = -INFINITY;
  for (uint32_t k = s0[r0[mid0]]; k < s0[r0[mid1]]; k++) {
    if (d->rep[k] != k)
      continue;
    c->count += gr[k].count;
    c->last = gr[k].last > c->last ? gr[k].last : c->last;
    c->t0 = fmin(c->t0, gr[k].t0);
    c->t1 = fmax(c->t1, gr[k].t1);
    c->crit |= gr[k].crit;
  }
  for (uint32_t n = 0; n < d->nop; n++)
    if (d->step[n] >= r0[mid0] && d->step[n] < r0[mid1])
      d->gof[n] = ng;
}

/* Edges between groups, merged; inside a group, counted. */
static void dg_edges(dg *d) {
  const rp__dot_extra *x = d->x;
  uint32_t ng = d->ng;
  grp *gr = d->gr;
  memset(d->nextc, 0xff, sizeof *d->nextc * d->nop);
  for (uint32_t i = 0; x && x->crit && i + 1 < x->ncrit; i++)
    d->nextc[x->crit[i]] = x->crit[i + 1];
  uint32_t npe = 0;
  for (uint32_t i = 0; i < d->m; i++) {
    rp_edge e;
    rp_graph_edge(d->g, i, &e);
    uint32_t f = d->gof[e.from], t = d->gof[e.to];
    if (f == t && (f == ng || d->step[e.from] == d->step[e.to])) {
      gr[f].inner++;
      continue;
    }
    d->pe[npe++] = (pedge){f,
                           t,
                           (uint8_t)e.kind,
                           d->nextc[e.from] == e.to,
                           d->step[e.from] != d->step[e.to] && f != ng &&
                               gr[f].step == gr[t].step,
                           e.buf};
  }
  qsort(d->pe, npe, sizeof *d->pe, pedge_cmp);
  d->npe = npe;
}

/* The graph's header and legend. */
static void dg_write_head(const dg *d) {
  FILE *fp = d->fp;
  fputs("digraph reprise {\n  graph [fontname=\"Helvetica\", labelloc=t, "
        "newrank=true, ranksep=0.25, nodesep=0.2",
        fp);
  if (d->x && d->x->title) {
    fputs(", label=\"", fp);
    put_str(fp, d->x->title, SIZE_MAX);
    fputc('"', fp);
  }
  fputs("];\n  node [shape=box, style=\"rounded,filled\", "
        "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\""
        ", fontsize=8, color=\"#555555\", arrowsize=0.6];\n",
        fp);
  legend(fp, &d->l, d->used, 1, d->x && d->x->start);
}

/* Group k's node. */
static void dg_write_group(const dg *d, uint32_t k) {
  FILE *fp = d->fp;
  const grp *a = &d->gr[k];
  const lanes *l = &d->l;
  if (a->nlanes > 1) { /* several lanes: a band of colour per lane */
    fprintf(fp,
            "    g%u [label=<<TABLE BORDER=\"0\" CELLBORDER=\"0\" "
            "CELLSPACING=\"0\" CELLPADDING=\"2\"><TR>",
            k);
    for (uint32_t i = 0; i < a->nlanes && i < 4; i++)
      fprintf(fp, "<TD BGCOLOR=\"%s\" WIDTH=\"5\"></TD>",
              l->colour[a->lanes[i]]);
    fputs("<TD>", fp);
    group_text(fp, d->g, a, l, d->x, T_HTML, 0, 0);
    fputs("</TD></TR></TABLE>>, tooltip=\"", fp);
    group_text(fp, d->g, a, l, d->x, T_TIP, 0, 0);
    fprintf(fp, "\", fillcolor=\"#ffffff\", margin=\"0.03\"");
  } else {
    fprintf(fp, "    g%u [label=\"", k);
    group_text(fp, d->g, a, l, d->x, T_LABEL, 0, 0);
    fprintf(fp, "\", tooltip=\"");
    group_text(fp, d->g, a, l, d->x, T_TIP, 0, 0);
    fprintf(fp, "\", fillcolor=\"%s\"", l->colour[a->lane]);
  }
  if (a->inserted || a->crit)
    fprintf(fp, ", style=\"rounded,filled%s%s\"", a->inserted ? ",dashed" : "",
            a->crit ? ",bold" : "");
  if (a->crit)
    fputs(", penwidth=3", fp);
  fputs("];\n", fp);
}

/* The runs: a cluster of groups each, the collapsed ones as one node. */
static void dg_write_runs(const dg *d) {
  FILE *fp = d->fp;
  const grp *gr = d->gr;
  const uint32_t *s0 = d->s0, *r0 = d->r0;
  for (uint32_t r = 0; r < d->nrun; r++) {
    if (r == d->mid0) { /* the collapsed runs */
      const grp *c = &gr[d->ng];
      fprintf(fp, "  g%u [label=\"", d->ng);
      group_text(fp, d->g, c, &d->l, d->x, T_LABEL, r0[d->mid0] + 1,
                 r0[d->mid1]);
      fprintf(fp, "\", tooltip=\"");
      group_text(fp, d->g, c, &d->l, d->x, T_TIP, r0[d->mid0] + 1, r0[d->mid1]);
      fprintf(fp, "\", fillcolor=\"#ffffff\", style=\"rounded,dashed\"%s];\n",
              c->crit ? ", penwidth=3" : "");
      r = d->mid1 - 1;
      continue;
    }
    uint32_t sa = r0[r], sb = r0[r + 1];
    uint32_t a0 = gr[s0[sa]].first, a1 = 0;
    for (uint32_t k = s0[sa]; k < s0[sb]; k++)
      a1 = gr[k].last > a1 ? gr[k].last : a1;
    if (d->nstep > 1 && sb - sa == 1)
      fprintf(fp,
              "  subgraph cluster_s%u {\n    label=\"step %u (#%u .. "
              "#%u)\"; style=\"rounded\"; color=\"#bbbbbb\"; "
              "fontsize=10;\n",
              r, sa + 1, a0, a1);
    else if (d->nstep > 1)
      fprintf(fp,
              "  subgraph cluster_s%u {\n    label=\"steps %u to %u, "
              "alike (#%u .. #%u)\"; style=\"rounded\"; "
              "color=\"#bbbbbb\"; fontsize=10;\n",
              r, sa + 1, sb, a0, a1);
    for (uint32_t k = s0[sa]; k < s0[sa + 1]; k++)
      dg_write_group(d, k);
    if (d->nstep > 1)
      fputs("  }\n", fp);
  }
}

/* One edge per pair of groups: the hazards, kind and buffer, counted. */
static void dg_write_edges(const dg *d) {
  FILE *fp = d->fp;
  const pedge *pe = d->pe;
  const rp_graph *g = d->g;
  for (uint32_t i = 0, npe = d->npe; i < npe;) {
    uint32_t j = i, n = 0, crit = 0, after = 1, next = 0;
    while (j < npe && pe[j].f == pe[i].f && pe[j].t == pe[i].t) {
      crit |= pe[j].crit;
      next |= pe[j].next;
      after &= pe[j].kind == RP_EDGE_AFTER;
      j++;
      n++;
    }
    fprintf(fp, "  g%u -> g%u [label=\"%s", pe[i].f, pe[i].t,
            next ? "next step: " : "");
    for (uint32_t k = i, shown = 0; k < j; k++) {
      if (k > i && pe[k].kind == pe[k - 1].kind && pe[k].buf == pe[k - 1].buf)
        continue;
      if (shown == 2) {
        fputs(", ...", fp);
        break;
      }
      fprintf(fp, "%s%s", shown ? ", " : "", kind_up[pe[k].kind & 3]);
      if (pe[k].buf < g->nbuf) {
        fputc(' ', fp);
        put_str(fp, g->buf[pe[k].buf].name, SIZE_MAX);
      }
      shown++;
    }
    fprintf(fp, "\", tooltip=\"%u edge%s", n, n > 1 ? "s" : "");
    for (uint32_t k = i; k < j;) {
      uint32_t r = k;
      while (r < j && pe[r].kind == pe[k].kind && pe[r].buf == pe[k].buf)
        r++;
      fprintf(fp, "\\n%s", kind_up[pe[k].kind & 3]);
      if (pe[k].buf < g->nbuf) {
        fputc(' ', fp);
        put_str(fp, g->buf[pe[k].buf].name, SIZE_MAX);
      }
      fprintf(fp, " x%u", r - k);
      k = r;
    }
    fputc('"', fp);
    if (crit)
      fputs(", penwidth=3, color=\"#222222\", style=bold", fp);
    else if (n > 1)
      fprintf(fp, ", penwidth=%.1f", fmin(1 + log2((double)n) / 2, 3));
    if (after && !crit)
      fputs(", style=dashed", fp);
    fputs("];\n", fp);
    i = j;
  }
}

static void dg_free(dg *d) {
  lanes_free(&d->l);
  free(d->step);
  free(d->gof);
  free(d->gr);
  free(d->nextc);
  free(d->pe);
  free(d->used);
  free(d->s0);
  free(d->r0);
  free(d->rep);
}

rp_status rp__dot_grouped(const rp_graph *g, const rp__dot_extra *x, FILE *fp) {
  if (!g || !fp)
    return RP_EINVAL;
  dg d;
  memset(&d, 0, sizeof d);
  d.g = g;
  d.x = x;
  d.fp = fp;
  d.nop = g->nop;
  d.m = rp_graph_num_edges(g);
  uint32_t nop = d.nop, m = d.m;
  rp_status st = lanes_build(g, x, &d.l);
  d.step = malloc(sizeof *d.step * (nop ? nop : 1));
  d.gof = malloc(sizeof *d.gof * (nop ? nop : 1));
  d.gr = calloc(nop ? nop + 1 : 1, sizeof *d.gr);
  d.nextc = malloc(sizeof *d.nextc * (nop ? nop : 1));
  d.pe = malloc(sizeof *d.pe * (m ? m : 1));
  d.used = calloc(d.l.n ? d.l.n : 1, 1);
  if (st != RP_OK || !d.step || !d.gof || !d.gr || !d.nextc || !d.pe || !d.used)
    st = RP_ENOMEM;
  if (st == RP_OK && (st = dg_group(&d)) == RP_OK &&
      (st = dg_fold(&d)) == RP_OK) {
    dg_collapse(&d);
    dg_edges(&d);
    dg_write_head(&d);
    dg_write_runs(&d);
    dg_write_edges(&d);
    fputs("}\n", fp);
    st = ferror(fp) ? RP_EIO : RP_OK;
  }
  dg_free(&d);
  return st;
}
