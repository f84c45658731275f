/* reprise: export macro, version and status codes shared by every header. */
#ifndef REPRISE_COMMON_H
#define REPRISE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_common Common definitions
 * The export macro, the library version and the status codes every
 * fallible call returns.
 *
 * The error rule: every function that returns an rp_status clears the
 * calling thread's rp_last_error() when it starts and, when it fails,
 * leaves there a message naming the call (a NULL argument included);
 * rp_graph_error() and rp_exec_error() show the same text for their
 * object's last call (docs/design.md, "Errors").
 * Thread safety: rp_last_error() is per thread; the functions here may be
 * called from any thread.
 * @{ */

#if defined(RP_BUILDING) && defined(__GNUC__)
#define RP_API __attribute__((visibility("default")))
#else
#define RP_API
#endif

/** The version these headers belong to (CMakeLists.txt's project version;
 * a test checks that they agree). */
#define RP_VERSION_MAJOR 0
#define RP_VERSION_MINOR 1
#define RP_VERSION_PATCH 0
#define RP_VERSION_STRING "0.1.0"
/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH, for
 * compile-time tests (#if RP_VERSION >= 100: 0.1.0 or later). The library
 * a program runs with says its own with rp_version(). */
#define RP_VERSION                                                             \
  (RP_VERSION_MAJOR * 10000 + RP_VERSION_MINOR * 100 + RP_VERSION_PATCH)

/** One table generates the enum, the names and the messages. */
#define RP_STATUS_MAP(X)                                                       \
  X(OK, 0, "success")                                                          \
  X(EINVAL, -1, "invalid argument")                                            \
  X(ENOMEM, -2, "out of memory")                                               \
  X(ECYCLE, -3, "recorded graph contains a cycle")                             \
  X(ENODEV, -4, "backend found no usable device")                              \
  X(ENOTSUP, -5, "backend not built into this library")                        \
  X(ERANGE, -6, "region out of the buffer's bounds")                           \
  X(ESTATE, -7, "call not allowed in the object's current phase")              \
  X(EPARSE, -8, "malformed graph file")                                        \
  X(EIO, -9, "input/output error")                                             \
  X(EBACKEND, -10, "backend failure during replay")                            \
  X(ENOKERNEL, -11, "kernel has no implementation for this backend")           \
  X(ENOTFOUND, -12, "no such name")                                            \
  X(ECOHERENCE, -13,                                                           \
    "results would depend on memory the program never "                        \
    "synchronised")                                                            \
  X(ETASK, -14, "an operation reported failure")                               \
  X(EACCESS, -15,                                                              \
    "an operation accessed memory outside its declared "                       \
    "regions")

/** Status of every fallible call: 0 on success, negative on error. */
typedef enum {
#define RP__X(name, code, msg) RP_##name = (code),
  RP_STATUS_MAP(RP__X)
#undef RP__X
} rp_status;

/** @brief Message for a status ("invalid argument").
 * @param s a status. @return a static string, never NULL. */
RP_API const char *rp_strerror(rp_status s);

/** @brief Name of a status ("RP_EINVAL").
 * @param s a status. @return a static string, never NULL. */
RP_API const char *rp_status_name(rp_status s);

/** @brief The message of the last failure in this thread: every call that
 * returns an rp_status clears it on entry and sets it when it fails (the
 * error rule above). Per thread. */
RP_API const char *rp_last_error(void);

/** @brief The version string of the library the program runs with
 * ("0.1.0"; RP_VERSION_STRING is that of the headers it was compiled
 * with). */
RP_API const char *rp_version(void);

/** @brief Monotonic clock in microseconds (the one rp_exec_last_us uses). */
RP_API double rp_clock_us(void);

/** @} */

/** @defgroup rp_file Atomic output files
 * Every file reprise writes (the CLI's outputs, model caches) is written
 * through these: into a temporary file in the target's folder, flushed to
 * disk and renamed over the target only when complete, so a full disk, a
 * failed write or a signal leaves the previous file as it was.
 * Thread safety: one rp_outfile is written, committed or abandoned from
 * one thread at a time; distinct ones may be open in distinct threads at
 * once (the table the signal handler reads is locked).
 * @{ */

/** An output file being written (opaque). */
typedef struct rp_outfile rp_outfile;

/** @brief Start writing @p path: @p *fp receives a stream on a new
 * temporary file "<dir>/.<name>.XXXXXX" next to it (the target is not
 * touched yet). A process killed by SIGTERM, SIGINT, SIGHUP or SIGXFSZ
 * while a file is open removes its temporary file when
 * rp_outfile_cleanup_on_signal() was called.
 * @return RP_OK, RP_EINVAL (NULL argument), RP_EIO (the folder cannot
 * be written: rp_last_error() says why), RP_ENOMEM. */
RP_API rp_status rp_outfile_open(rp_outfile **out, const char *path, FILE **fp);

/** @brief Finish: flush, fsync, close and rename the temporary file over
 * the target (whose permissions it takes, else 0666 less the umask). On
 * any failure the temporary file is removed, the target is left as it
 * was and rp_last_error() says why ("PATH: write failed: No space left on
 * device"). Frees @p f in every case.
 * @return RP_OK or RP_EIO. */
RP_API rp_status rp_outfile_commit(rp_outfile *f);

/** @brief Give up: close and remove the temporary file, leave the target;
 * frees @p f (NULL: nothing). */
RP_API void rp_outfile_abort(rp_outfile *f);

/** @brief Install handlers of SIGTERM, SIGINT, SIGHUP and SIGXFSZ (those
 * left at their default) that remove the temporary files of the files
 * being written, then die of the signal as before. For programs such as
 * the CLI; idempotent. */
RP_API void rp_outfile_cleanup_on_signal(void);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
