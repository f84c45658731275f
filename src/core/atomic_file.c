/* Atomic output files (issue 32, item 4): the one way reprise writes a
 * file. The bytes go to a temporary file in the target's folder, which is
 * flushed, fsync'd and renamed over the target only when complete; a full
 * disk, a failed write or a signal leaves the previous file intact. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"
#include "reprise/common.h"

struct rp_outfile {
  FILE *fp;
  char *path; /* the target */
  int slot;   /* in the signal table, or -1 */
  char tmp[]; /* the temporary file */
};

/* The temporary files open now, for the signal handler: a path is
 * published (live = 1) only once written whole. */
enum { SLOTS = 16, SLOT_PATH = 4096 };
static struct {
  volatile sig_atomic_t live;
  char path[SLOT_PATH];
} slots[SLOTS];
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;

static int slot_take(const char *tmp) {
  if (strlen(tmp) >= SLOT_PATH)
    return -1;
  pthread_mutex_lock(&slots_mu);
  int k = -1;
  for (int i = 0; i < SLOTS && k < 0; i++)
    if (!slots[i].live) {
      strcpy(slots[i].path, tmp);
      slots[i].live = 1;
      k = i;
    }
  pthread_mutex_unlock(&slots_mu);
  return k;
}

static void slot_drop(int k) {
  if (k < 0)
    return;
  pthread_mutex_lock(&slots_mu);
  slots[k].live = 0;
  pthread_mutex_unlock(&slots_mu);
}

static void on_signal(int sig) {
  for (int i = 0; i < SLOTS; i++)
    if (slots[i].live)
      unlink(slots[i].path);
  signal(sig, SIG_DFL);
  raise(sig);
}

void rp_outfile_cleanup_on_signal(void) {
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
  /* A file size limit (ulimit -f): the write fails with EFBIG, which the
   * commit reports, rather than the process dying mid-file. */
  struct sigaction old;
  if (!sigaction(SIGXFSZ, NULL, &old) && old.sa_handler == SIG_DFL)
    signal(SIGXFSZ, SIG_IGN);
}

rp_status rp_outfile_open(rp_outfile **out, const char *path, FILE **fp) {
  RP_ENTER();
  if (!out || !path || !fp)
    return RP_NULL_ARG();
  if (!path[0]) {
    rp__set_last_error("rp_outfile_open: empty path");
    return RP_EINVAL;
  }
  *out = NULL;
  *fp = NULL;
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
  size_t n = strlen(path);
  if (dir == n) {
    rp__set_last_errorf("%s: cannot write: a folder, not a file", path);
    return RP_EIO;
  }
  rp_outfile *f = malloc(sizeof *f + n + 32);
  if (!f || !(f->path = rp__strdup(path))) {
    free(f);
    return RP_ENOMEM;
  }
  static unsigned counter;
  int fd = -1;
  /* The file is created and published to the signal handler as one step:
   * a signal in between would leave it behind. */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  for (int tries = 0; fd < 0 && tries < 64; tries++) {
    unsigned r =
        __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 2654435761u ^
        (unsigned)getpid() ^ (unsigned)time(NULL);
    snprintf(f->tmp, n + 32, "%.*s.%s.%06x~", (int)dir, path, path + dir,
             r & 0xffffffu);
    /* 0666 less the umask, as fopen(path, "w") would create it. */
    fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    rp__set_last_errorf("%s: cannot write: %s", path, strerror(e));
    free(f->path);
    free(f);
    return RP_EIO;
  }
  f->slot = slot_take(f->tmp);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!(f->fp = fdopen(fd, "w"))) {
    int e = errno;
    close(fd);
    unlink(f->tmp);
    slot_drop(f->slot);
    free(f->path);
    free(f);
    return e == ENOMEM ? RP_ENOMEM : RP_EIO;
  }
  *out = f;
  *fp = f->fp;
  return RP_OK;
}

static void drop(rp_outfile *f) {
  unlink(f->tmp);
  slot_drop(f->slot);
  free(f->path);
  free(f);
}

void rp_outfile_abort(rp_outfile *f) {
  if (!f)
    return;
  fclose(f->fp);
  drop(f);
}

rp_status rp_outfile_commit(rp_outfile *f) {
  RP_ENTER();
  if (!f)
    return RP_NULL_ARG();
  /* A write that failed earlier left errno set; fflush tries the rest. */
  int e = ferror(f->fp) ? (errno ? errno : EIO) : 0;
  if (!e && fflush(f->fp))
    e = errno ? errno : EIO;
  if (!e && fsync(fileno(f->fp)) && errno != EINVAL && errno != EROFS)
    e = errno;
  /* The target's permissions carry over. */
  struct stat st;
  if (!e && !stat(f->path, &st) && S_ISREG(st.st_mode))
    fchmod(fileno(f->fp), st.st_mode & 07777);
  if (fclose(f->fp) && !e)
    e = errno ? errno : EIO;
  if (!e && rename(f->tmp, f->path))
    e = errno;
  if (e) {
    rp__set_last_errorf("%s: write failed: %s (the previous file, if any, "
                        "is left as it was)",
                        f->path, strerror(e));
    drop(f);
    return RP_EIO;
  }
  slot_drop(f->slot);
  free(f->path);
  free(f);
  return RP_OK;
}
