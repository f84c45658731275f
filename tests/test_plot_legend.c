/* The speedup picture's legend fits in the picture (issue 37: it was
 * clipped at the right edge): every legend label, at 7.2 pixels a
 * character (12 px sans-serif averages less), ends inside the width the
 * SVG declares, and the viewBox matches that width. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

Test(plot_legend, labels_end_inside_the_picture) {
  rp_speedup_point p[2] = {{1, 1.0, 1.0, 1.0, 0.9, 1.1},
                           {2, 1.8, 2.0, 1.7, 1.6, 1.8}};
  char *svg = tu_speedup_svg(p, 2, "legend");
  double w = 0, vw = 0;
  const char *s = strstr(svg, "<svg ");
  cr_assert_not_null(s);
  cr_assert_eq(sscanf(strstr(s, "width=\"") + 7, "%lf", &w), 1);
  cr_assert_eq(sscanf(strstr(s, "viewBox=\"0 0 ") + 13, "%lf", &vw), 1);
  cr_assert_eq(w, vw, "width %g, viewBox width %g", w, vw);
  const char *labels[] = {"predicted", "achieved (min-max)",
                          "1 to upper bound"};
  for (unsigned i = 0; i < 3; i++) {
    char key[64];
    snprintf(key, sizeof key, "\">%s</text>", labels[i]);
    const char *e = strstr(svg, key);
    cr_assert_not_null(e, "legend label %s missing", labels[i]);
    const char *t = e;
    while (t > svg && strncmp(t, "<text x=\"", 9))
      t--;
    double x = 0;
    cr_assert_eq(sscanf(t + 9, "%lf", &x), 1);
    double end = x + 7.2 * (double)strlen(labels[i]);
    cr_assert(end <= w, "\"%s\" ends at %.0f px, the picture is %.0f wide",
              labels[i], end, w);
  }
  free(svg);
}
