/* Minimal xclbin writer (for emulation and tests) and reader (compute
 * units and kernel arguments) for the XRT backend. */
#include "rp_xrt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xclbin.h>

/* Register map: arguments start at 0x10, 8 bytes each. */
#define ARG_BASE 0x10u
#define CU_BASE 0x1800000u
#define CU_STRIDE 0x10000u

typedef struct sbuf {
  char *p;
  size_t n, cap;
  int oom;
} sbuf;

static void sb_printf(sbuf *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = s->cap - s->n;
    va_start(ap, fmt);
    int k = s->p ? vsnprintf(s->p + s->n, room, fmt, ap) : -1;
    va_end(ap);
    if (k >= 0 && (size_t)k < room) {
      s->n += (size_t)k;
      return;
    }
    size_t cap = s->cap ? s->cap * 2 : 4096;
    char *q = (char *)realloc(s->p, cap);
    if (!q) {
      s->oom = 1;
      return;
    }
    s->p = q;
    s->cap = cap;
  }
}

static const char *arg_type(char c, unsigned *size) {
  *size = 8;
  switch (c) {
  case 'g':
    return "void*";
  case 'i':
    *size = 4;
    return "int";
  case 'u':
    *size = 4;
    return "uint";
  case 'f':
    *size = 4;
    return "float";
  case 'd':
    return "double";
  case 'l':
    return "unsigned long";
  default:
    return NULL;
  }
}

static void build_xml(sbuf *s, const rp__xrt_kspec *k, unsigned nk) {
  unsigned ncu = 0;
  for (unsigned i = 0; i < nk; i++)
    ncu += k[i].ncu;
  sb_printf(s,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<project name=\"reprise\">\n"
            " <platform vendor=\"reprise\" boardid=\"noop\" "
            "name=\"noop\" featureRomTime=\"0\">\n"
            "  <version major=\"1\" minor=\"0\"/>\n"
            "  <device name=\"fpga0\" fpgaDevice=\"noop\" "
            "addrWidth=\"0\">\n"
            "   <core name=\"OCL_REGION_0\" target=\"hw\" "
            "type=\"clc_region\" clockFreq=\"300MHz\" "
            "numComputeUnits=\"%u\">\n",
            ncu);
  unsigned cu = 0;
  for (unsigned i = 0; i < nk; i++) {
    sb_printf(s,
              "    <kernel name=\"%s\" language=\"c\" "
              "vlnv=\"reprise:hls:%s:1.0\" "
              "preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" "
              "interrupt=\"true\" hwControlProtocol=\"ap_ctrl_hs\">\n",
              k[i].name, k[i].name);
    sb_printf(s, "     <port name=\"S_AXI_CONTROL\" mode=\"slave\" "
                 "range=\"0x10000\" dataWidth=\"32\" "
                 "portType=\"addressable\" base=\"0x0\"/>\n"
                 "     <port name=\"M_AXI_GMEM\" mode=\"master\" "
                 "range=\"0xFFFFFFFFFFFFFFFF\" dataWidth=\"32\" "
                 "portType=\"addressable\" base=\"0x0\"/>\n");
    for (unsigned a = 0; k[i].args[a]; a++) {
      unsigned size;
      const char *t = arg_type(k[i].args[a], &size);
      int g = k[i].args[a] == 'g';
      sb_printf(s,
                "     <arg name=\"a%u\" addressQualifier=\"%d\" "
                "id=\"%u\" port=\"%s\" size=\"0x%x\" offset=\"0x%x\" "
                "hostOffset=\"0x0\" hostSize=\"0x%x\" type=\"%s\"/>\n",
                a, g ? 1 : 0, a, g ? "M_AXI_GMEM" : "S_AXI_CONTROL", size,
                ARG_BASE + 8 * a, size, t);
    }
    for (unsigned c = 0; c < k[i].ncu; c++, cu++)
      sb_printf(s,
                "     <instance name=\"%s_%u\">\n"
                "      <addrRemap base=\"0x%x\" port=\"S_AXI_CONTROL\"/>\n"
                "     </instance>\n",
                k[i].name, c + 1, CU_BASE + CU_STRIDE * cu);
    sb_printf(s, "    </kernel>\n");
  }
  sb_printf(s, "   </core>\n  </device>\n </platform>\n</project>\n");
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

rp_status rp__xrt_xclbin_build(const rp__xrt_kspec *k, unsigned nk, void **out,
                               size_t *bytes) {
  *out = NULL;
  *bytes = 0;
  unsigned ncu = 0, nconn = 0;
  for (unsigned i = 0; i < nk; i++) {
    if (!k[i].name || !k[i].args || !k[i].ncu || strlen(k[i].name) > 40)
      return RP_EINVAL;
    for (unsigned a = 0; k[i].args[a]; a++) {
      unsigned size;
      if (!arg_type(k[i].args[a], &size))
        return RP_EINVAL;
      if (k[i].args[a] == 'g')
        nconn += k[i].ncu;
    }
    ncu += k[i].ncu;
  }
  if (!nk || ncu > RP__XRT_MAX_CUS * 4)
    return RP_EINVAL;

  sbuf xml = {NULL, 0, 0, 0};
  build_xml(&xml, k, nk);
  if (xml.oom) {
    free(xml.p);
    return RP_ENOMEM;
  }

  const unsigned nsect = 4;
  size_t hdr =
      sizeof(struct axlf) + (nsect - 1) * sizeof(struct axlf_section_header);
  size_t ip_sz =
      sizeof(struct ip_layout) + (ncu ? ncu - 1 : 0) * sizeof(struct ip_data);
  size_t mem_sz = sizeof(struct mem_topology);
  size_t con_sz = sizeof(struct connectivity) +
                  (nconn ? nconn - 1 : 0) * sizeof(struct connection);
  size_t off[4], sz[4] = {ip_sz, xml.n, mem_sz, con_sz};
  size_t total = align8(hdr);
  for (unsigned i = 0; i < nsect; i++) {
    off[i] = total;
    total = align8(total + sz[i]);
  }
  unsigned char *img = (unsigned char *)calloc(1, total);
  if (!img) {
    free(xml.p);
    return RP_ENOMEM;
  }
  struct axlf *top = (struct axlf *)img;
  memcpy(top->m_magic, "xclbin2", 8);
  top->m_signature_length = -1;
  memset(top->reserved, 0xff, sizeof top->reserved);
  memset(top->m_keyBlock, 0xff, sizeof top->m_keyBlock);
  top->m_header.m_length = total;
  top->m_header.m_versionMajor = 2;
  top->m_header.m_versionMinor = 13;
  top->m_header.m_mode = XCLBIN_FLAT;
  top->m_header.m_numSections = nsect;
  snprintf((char *)top->m_header.m_platformVBNV,
           sizeof top->m_header.m_platformVBNV, "reprise:noop:emulation:1.0");
  const uint32_t kinds[4] = {IP_LAYOUT, EMBEDDED_METADATA, MEM_TOPOLOGY,
                             CONNECTIVITY};
  const char *names[4] = {"ip_layout", "metadata", "mem_topology",
                          "connectivity"};
  for (unsigned i = 0; i < nsect; i++) {
    struct axlf_section_header *h = &top->m_sections[i];
    h->m_sectionKind = kinds[i];
    snprintf(h->m_sectionName, sizeof h->m_sectionName, "%s", names[i]);
    h->m_sectionOffset = off[i];
    h->m_sectionSize = sz[i];
  }

  struct ip_layout *ip = (struct ip_layout *)(img + off[0]);
  struct connectivity *con = (struct connectivity *)(img + off[3]);
  ip->m_count = (int32_t)ncu;
  con->m_count = (int32_t)nconn;
  unsigned cu = 0, c2 = 0;
  for (unsigned i = 0; i < nk; i++)
    for (unsigned c = 0; c < k[i].ncu; c++, cu++) {
      struct ip_data *d = &ip->m_ip_data[cu];
      d->m_type = IP_KERNEL;
      /* AP_CTRL_HS with interrupts enabled; interrupt id = cu. */
      d->properties = (AP_CTRL_HS << IP_CONTROL_SHIFT) | 1u |
                      ((cu << IP_INTERRUPT_ID_SHIFT) & IP_INTERRUPT_ID_MASK);
      d->m_base_address = CU_BASE + (uint64_t)CU_STRIDE * cu;
      snprintf((char *)d->m_name, sizeof d->m_name, "%s:%s_%u", k[i].name,
               k[i].name, c + 1);
      for (unsigned a = 0; k[i].args[a]; a++)
        if (k[i].args[a] == 'g') {
          con->m_connection[c2].arg_index = (int32_t)a;
          con->m_connection[c2].m_ip_layout_index = (int32_t)cu;
          con->m_connection[c2].mem_data_index = 0;
          c2++;
        }
    }
  memcpy(img + off[1], xml.p, xml.n);
  free(xml.p);
  struct mem_topology *mem = (struct mem_topology *)(img + off[2]);
  mem->m_count = 1;
  mem->m_mem_data[0].m_type = MEM_DDR4;
  mem->m_mem_data[0].m_used = 1;
  mem->m_mem_data[0].m_size = 4u * 1024 * 1024; /* KB: 4 GB */
  mem->m_mem_data[0].m_base_address = 0;
  memcpy(mem->m_mem_data[0].m_tag, "bank0", 6);

  /* A uuid from the content (FNV-1a over the sections), so that the same
   * kernels give the same xclbin. */
  uint64_t h1 = 1469598103934665603ull, h2 = 1099511628211ull;
  for (size_t i = off[0]; i < total; i++) {
    h1 = (h1 ^ img[i]) * 1099511628211ull;
    h2 = (h2 + img[i]) * 6364136223846793005ull + 1442695040888963407ull;
  }
  memcpy(top->m_header.uuid, &h1, 8);
  memcpy((unsigned char *)top->m_header.uuid + 8, &h2, 8);
  top->m_uniqueId = h1;
  *out = img;
  *bytes = total;
  return RP_OK;
}

rp_status rp__xrt_xclbin_write(const char *path, const rp__xrt_kspec *k,
                               unsigned nk) {
  void *img;
  size_t n;
  rp_status s = rp__xrt_xclbin_build(k, nk, &img, &n);
  if (s != RP_OK)
    return s;
  FILE *fp = fopen(path, "wb");
  if (!fp) {
    free(img);
    return RP_EIO;
  }
  size_t w = fwrite(img, 1, n, fp);
  int c = fclose(fp);
  free(img);
  return w == n && c == 0 ? RP_OK : RP_EIO;
}

/* ---- reader ---- */

static rp_status perr(char *err, size_t errlen, const char *msg) {
  snprintf(err, errlen, "%s", msg);
  return RP_EPARSE;
}

/* Value of attribute `name` in the tag [p, end), or 0 if absent. */
static int xml_attr(const char *p, const char *end, const char *name, char *val,
                    size_t len) {
  size_t nl = strlen(name);
  for (const char *q = p; q + nl + 2 < end; q++) {
    if ((q[-1] != ' ' && q[-1] != '\t' && q[-1] != '\n') ||
        strncmp(q, name, nl) != 0 || q[nl] != '=' || q[nl + 1] != '"')
      continue;
    const char *v = q + nl + 2, *e = v;
    while (e < end && *e != '"')
      e++;
    size_t n = (size_t)(e - v) < len - 1 ? (size_t)(e - v) : len - 1;
    memcpy(val, v, n);
    val[n] = '\0';
    return 1;
  }
  return 0;
}

static const char *find_in(const char *p, const char *end, const char *s) {
  size_t n = strlen(s);
  for (; p + n <= end; p++)
    if (memcmp(p, s, n) == 0)
      return p;
  return NULL;
}

/* The kernels and their arguments from the metadata XML. */
static rp_status parse_xml(const char *x, size_t n, rp__xrt_kinfo *k,
                           unsigned *nk, char *err, size_t errlen) {
  const char *end = x + n, *p = x;
  *nk = 0;
  while ((p = find_in(p, end, "<kernel ")) != NULL) {
    const char *te = find_in(p, end, ">");
    const char *ke = find_in(p, end, "</kernel>");
    if (!te || !ke)
      return perr(err, errlen, "metadata: unterminated <kernel>");
    if (*nk == RP__XRT_MAX_KERNELS)
      return perr(err, errlen, "metadata: too many kernels");
    rp__xrt_kinfo *ki = &k[(*nk)++];
    memset(ki, 0, sizeof *ki);
    if (!xml_attr(p + 1, te, "name", ki->name, sizeof ki->name))
      return perr(err, errlen, "metadata: <kernel> without a name");
    const char *a = te;
    while ((a = find_in(a, ke, "<arg ")) != NULL) {
      const char *ae = find_in(a, ke, ">");
      char id[16], aq[16], size[16];
      if (!ae)
        return perr(err, errlen, "metadata: unterminated <arg>");
      if (xml_attr(a + 1, ae, "id", id, sizeof id) && id[0]) {
        unsigned long i = strtoul(id, NULL, 0);
        if (i >= RP__XRT_MAX_ARGS)
          return perr(err, errlen, "metadata: argument id too large");
        rp__xrt_arg *g = &ki->arg[i];
        aq[0] = size[0] = '\0';
        xml_attr(a + 1, ae, "addressQualifier", aq, sizeof aq);
        xml_attr(a + 1, ae, "size", size, sizeof size);
        if (!xml_attr(a + 1, ae, "type", g->type, sizeof g->type))
          g->type[0] = '\0';
        g->global = aq[0] == '1' || aq[0] == '2';
        g->size = (unsigned)strtoul(size, NULL, 0);
        if (i + 1 > ki->nargs)
          ki->nargs = (unsigned)i + 1;
      }
      a = ae;
    }
    p = ke;
  }
  return RP_OK;
}

rp_status rp__xrt_xclbin_parse(const void *img, size_t bytes,
                               rp__xrt_kinfo **out, unsigned *nk, char *err,
                               size_t errlen) {
  const unsigned char *b = (const unsigned char *)img;
  const struct axlf *top = (const struct axlf *)img;
  *out = NULL;
  *nk = 0;
  if (bytes < sizeof(struct axlf) || memcmp(top->m_magic, "xclbin2", 8))
    return perr(err, errlen, "not an xclbin (no \"xclbin2\" magic)");
  uint32_t ns = top->m_header.m_numSections;
  if (top->m_header.m_length > bytes || ns == 0 ||
      ns > (bytes - sizeof(struct axlf)) / sizeof(struct axlf_section_header) +
               1)
    return perr(err, errlen,
                "truncated xclbin (header length or "
                "section count beyond the file)");
  const struct ip_layout *ip = NULL;
  const char *xml = NULL;
  size_t xml_n = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const struct axlf_section_header *h = &top->m_sections[i];
    if (h->m_sectionOffset > bytes ||
        h->m_sectionSize > bytes - h->m_sectionOffset)
      return perr(err, errlen, "xclbin section lies beyond the file");
    if (h->m_sectionKind == IP_LAYOUT && h->m_sectionSize >= sizeof(int32_t)) {
      ip = (const struct ip_layout *)(b + h->m_sectionOffset);
      if (ip->m_count < 0 ||
          h->m_sectionSize < 8 + (uint64_t)ip->m_count * sizeof(struct ip_data))
        return perr(err, errlen, "xclbin IP_LAYOUT section is truncated");
    } else if (h->m_sectionKind == EMBEDDED_METADATA) {
      xml = (const char *)(b + h->m_sectionOffset);
      xml_n = h->m_sectionSize;
    }
  }
  if (!xml)
    return perr(err, errlen, "xclbin has no EMBEDDED_METADATA section");
  if (!ip)
    return perr(err, errlen, "xclbin has no IP_LAYOUT section");
  rp__xrt_kinfo *k = (rp__xrt_kinfo *)calloc(RP__XRT_MAX_KERNELS, sizeof *k);
  if (!k)
    return RP_ENOMEM;
  rp_status s = parse_xml(xml, xml_n, k, nk, err, errlen);
  if (s != RP_OK) {
    free(k);
    *nk = 0;
    return s;
  }
  for (int32_t i = 0; i < ip->m_count; i++) {
    const struct ip_data *d = &ip->m_ip_data[i];
    char name[65];
    if (d->m_type != IP_KERNEL)
      continue;
    memcpy(name, d->m_name, 64);
    name[64] = '\0';
    char *colon = strchr(name, ':');
    if (!colon)
      continue;
    *colon = '\0';
    for (unsigned j = 0; j < *nk; j++)
      if (strcmp(k[j].name, name) == 0 && k[j].ncu < RP__XRT_MAX_CUS) {
        snprintf(k[j].cu[k[j].ncu++], sizeof k[j].cu[0], "%s", colon + 1);
        break;
      }
  }
  *out = k;
  return RP_OK;
}
