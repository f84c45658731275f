/* reprise: record once, replay many. The umbrella header. */
#ifndef REPRISE_H
#define REPRISE_H

#include "reprise/common.h"
#include "reprise/record.h"
#include "reprise/model.h"
#include "reprise/analyze.h"
#include "reprise/check.h"
#include "reprise/replay.h"
#include "reprise/measure.h"
#include "reprise/kernel.h"
#include "reprise/plugin.h"
#include "reprise/library.h"

#endif
