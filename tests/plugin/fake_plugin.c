/* Test plugins, one source compiled several ways: FAKE_NAME the backend's
 * name, FAKE_ABI its interface version, FAKE_NO_ENTRY no entry point,
 * FAKE_VENDOR a call into a vendor library (absent at run time). */
#include "reprise/backend.h"
#include "reprise/plugin.h"

#ifndef FAKE_ABI
#define FAKE_ABI RP_BACKEND_ABI
#endif

#ifdef FAKE_VENDOR
int novendor_init(void);
static rp_status probe(void) { return novendor_init() ? RP_ENODEV : RP_OK; }
#else
static rp_status probe(void) { return RP_OK; }
#endif

const rp_backend fake_backend = {
    .abi = FAKE_ABI, .name = FAKE_NAME, .priority = -100, .probe = probe};
#ifndef FAKE_NO_ENTRY
RP_PLUGIN_DEFINE(fake_backend)
#endif
