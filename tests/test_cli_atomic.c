/* Atomic outputs (issue 32, item 4): every file the CLI writes survives a
 * full disk (a file size limit, as `ulimit -f`) and a SIGTERM mid-write
 * with the previous file intact and no temporary file left, and the
 * failure says why; rp_outfile_* themselves, a signal raised mid-file
 * included. And the CLI's unclear or false messages of item 6: a folder
 * given to --load-buffer, an unknown --mode, a model cache that cannot be
 * written. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

#define DATA RP_TEST_DATA
static const char OLD[] = "the previous file\n";

static char dir[64];

static void mkdir_tmp(void) {
  strcpy(dir, "/tmp/rp_atomicXXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void rm_tree(void) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[512];
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  if (d)
    closedir(d);
  rmdir(dir);
}

/* Files of the folder other than @p keep (the temporary ones left). */
static unsigned others(const char *keep) {
  DIR *d = opendir(dir);
  struct dirent *e;
  unsigned n = 0;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        strcmp(e->d_name, keep))
      n++;
  closedir(d);
  return n;
}

static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return NULL;
  char *b = malloc(1 << 26);
  size_t n = fread(b, 1, (1 << 26) - 1, fp);
  b[n] = 0;
  fclose(fp);
  *len = n;
  return b;
}

static void put(const char *path, const char *s) {
  FILE *fp = fopen(path, "w");
  cr_assert_not_null(fp);
  fputs(s, fp);
  fclose(fp);
}

/* Starts `reprise ARGS` (%s in ARGS: the target) with a file size limit of
 * @p limit bytes (0: none); its stderr goes to *errfd. */
static pid_t start(const char *args, const char *target, rlim_t limit,
                   int *errfd) {
  char cmd[2048], a[1024];
  snprintf(a, sizeof a, args, target);
  snprintf(cmd, sizeof cmd, "exec %s %s >/dev/null", RP_TEST_TOOL, a);
  int pfd[2];
  cr_assert_eq(pipe(pfd), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (!pid) {
    dup2(pfd[1], 2);
    close(pfd[0]);
    close(pfd[1]);
    setenv("XDG_CACHE_HOME", dir, 1);
    setenv("RP_NO_AUTOCALIBRATE", "1", 1);
    if (limit) {
      struct rlimit rl = {limit, limit};
      setrlimit(RLIMIT_FSIZE, &rl);
    }
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(pfd[1]);
  *errfd = pfd[0];
  return pid;
}

static int finish(pid_t pid, int errfd, char *err, size_t n) {
  size_t len = 0;
  ssize_t r;
  while (len + 1 < n && (r = read(errfd, err + len, n - 1 - len)) > 0)
    len += (size_t)r;
  err[len] = 0;
  close(errfd);
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  return st;
}

/* Every output kind of the CLI: its arguments (%s: the file written). */
static const char *const kinds[] = {
    "dot -o %s " DATA "/jacobi.json",
    "analyze --dot %s " DATA "/jacobi.json",
    "analyze --svg %s " DATA "/jacobi.json",
    "analyze --trace %s " DATA "/jacobi.json",
    "plot --no-calibrate --threads 1 -o %s " DATA "/jacobi.json",
    "run --backend reference --save-buffer A=%s " DATA "/copies.json",
    "calibrate --backend reference --runs 1 --quiet --out %s",
};

Test(cli_atomic, full_disk_keeps_the_previous_file, .timeout = 50) {
  mkdir_tmp();
  char target[128], err[4096];
  snprintf(target, sizeof target, "%s/out", dir);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    put(target, OLD);
    int fd;
    pid_t pid = start(kinds[k], target, 512, &fd);
    int st = finish(pid, fd, err, sizeof err);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "%s: status %d\n%s",
              kinds[k], st, err);
    cr_assert(strstr(err, target) && strstr(err, "File too large"), "%s: %s",
              kinds[k], err);
    size_t len;
    char *got = slurp(target, &len);
    cr_assert_str_eq(got, OLD, "%s: the previous file became %zu bytes",
                     kinds[k], len);
    free(got);
    cr_assert_eq(others("out"), 0, "%s: a temporary file left", kinds[k]);
    /* Without the limit: written whole, in place of the old one. */
    pid = start(kinds[k], target, 0, &fd);
    st = finish(pid, fd, err, sizeof err);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", kinds[k], err);
    got = slurp(target, &len);
    cr_assert_gt(len, 512, "%s: %zu bytes", kinds[k], len);
    free(got);
    cr_assert_eq(others("out"), 0, "%s: a temporary file left", kinds[k]);
  }
  rm_tree();
}

/* A graph of n host tasks in a chain over one buffer, as a file. */
static void big_graph(const char *path, unsigned n) {
  static unsigned char m[64];
  static tu_host_arg arg = {0, 8};
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "M", m, sizeof m, &b));
  rp_access a = {rp_range_bytes(b, 0, 8), RP_INOUT};
  for (unsigned i = 0; i < n; i++)
    TU_OK(g, rp_record_host(g, tu_host_bump, &arg, &a, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  FILE *fp = fopen(path, "w");
  TU_OK(g, rp_graph_write_json(g, fp));
  fclose(fp);
  rp_graph_destroy(g);
}

/* Whether a file of the folder other than those named is there. */
static int temp_seen(void) { return others("out") > 1; }

Test(cli_atomic, sigterm_mid_write_keeps_the_previous_file, .timeout = 50) {
  mkdir_tmp();
  char target[128], graph[128], err[4096];
  snprintf(target, sizeof target, "%s/out", dir);
  snprintf(graph, sizeof graph, "%s/g.json", dir);
  big_graph(graph, 60000);
  char args[256];
  snprintf(args, sizeof args, "analyze --trace %%s %s", graph);
  unsigned killed = 0;
  for (int attempt = 0; attempt < 6 && killed < 2; attempt++) {
    put(target, OLD);
    int fd;
    pid_t pid = start(args, target, 0, &fd);
    /* Wait for its temporary file (others than out and g.json), then
     * SIGTERM. */
    struct timespec ts = {0, 100000};
    for (int i = 0; i < 200000 && !temp_seen(); i++)
      nanosleep(&ts, NULL);
    kill(pid, SIGTERM);
    int st = finish(pid, fd, err, sizeof err);
    size_t len;
    char *got = slurp(target, &len);
    if (WIFSIGNALED(st)) {
      cr_assert_eq(WTERMSIG(st), SIGTERM);
      cr_assert_str_eq(got, OLD, "killed mid-write: %zu bytes", len);
      killed++;
    } else {
      /* Done before the signal: the new file whole. */
      cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", err);
      cr_assert_gt(len, 1000000);
    }
    free(got);
    cr_assert_eq(others("out"), 1,
                 "a temporary file left (attempt %d, "
                 "status %d)",
                 attempt, st);
  }
  cr_assert_geq(killed, 1);
  rm_tree();
}

/* The helper itself: a failed write keeps the old file and says why; a
 * signal raised mid-file removes the temporary file and kills. */
Test(cli_atomic, outfile_commit_abort_and_signal) {
  mkdir_tmp();
  char target[128];
  snprintf(target, sizeof target, "%s/out", dir);
  put(target, OLD);
  chmod(target, 0640);
  rp_outfile *f;
  FILE *fp;
  TU_OK(NULL, rp_outfile_open(&f, target, &fp));
  fputs("new", fp);
  cr_assert_eq(others("out"), 1);
  rp_outfile_abort(f);
  size_t len;
  char *got = slurp(target, &len);
  cr_assert_str_eq(got, OLD);
  free(got);
  cr_assert_eq(others("out"), 0);
  TU_OK(NULL, rp_outfile_open(&f, target, &fp));
  fputs("new", fp);
  TU_OK(NULL, rp_outfile_commit(f));
  got = slurp(target, &len);
  cr_assert_str_eq(got, "new");
  free(got);
  struct stat st;
  cr_assert_eq(stat(target, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0640, "permissions %o", st.st_mode);
  /* Refusals say why. */
  cr_assert_eq(rp_outfile_open(&f, "/nonexistent/dir/x", &fp), RP_EIO);
  cr_assert(strstr(rp_last_error(), "/nonexistent/dir/x: cannot write: No "
                                    "such file or directory"),
            "%s", rp_last_error());
  cr_assert_eq(rp_outfile_open(&f, "/tmp/", &fp), RP_EIO);
  cr_assert_eq(rp_outfile_open(NULL, target, &fp), RP_EINVAL);
  /* A folder in the way of the rename. */
  char sub[160];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  cr_assert_eq(mkdir(sub, 0755), 0);
  TU_OK(NULL, rp_outfile_open(&f, sub, &fp));
  fputs("x", fp);
  cr_assert_eq(rp_outfile_commit(f), RP_EIO);
  cr_assert(strstr(rp_last_error(), "sub: write failed: Is a directory"), "%s",
            rp_last_error());
  rmdir(sub);
  /* SIGTERM mid-file: the child dies of it, its temporary file removed. */
  put(target, OLD);
  pid_t pid = fork();
  if (!pid) {
    rp_outfile_cleanup_on_signal();
    if (rp_outfile_open(&f, target, &fp) != RP_OK)
      _exit(3);
    for (int i = 0; i < 100000; i++)
      fputs("half a file\n", fp);
    fflush(fp);
    raise(SIGTERM);
    _exit(4);
  }
  int ws;
  cr_assert_eq(waitpid(pid, &ws, 0), pid);
  cr_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGTERM, "status %d", ws);
  got = slurp(target, &len);
  cr_assert_str_eq(got, OLD);
  free(got);
  cr_assert_eq(others("out"), 0);
  rm_tree();
}

/* Runs `reprise ARGS`; its exit status, its stderr in err. */
static int run_tool(const char *args, char *err, size_t n) {
  int fd;
  pid_t pid = start(args, "", 0, &fd);
  int st = finish(pid, fd, err, n);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli_misuse, clear_messages) {
  mkdir_tmp();
  char err[4096], args[512];
  snprintf(args, sizeof args,
           "run --backend reference --load-buffer A=%s " DATA "/copies.json",
           dir);
  cr_assert_eq(run_tool(args, err, sizeof err), 1);
  cr_assert(strstr(err, "--load-buffer A: cannot open") &&
                strstr(err, "Is a directory"),
            "%s", err);
  cr_assert_eq(
      run_tool("analyze --mode bogus " DATA "/copies.json", err, sizeof err),
      2);
  cr_assert(strstr(err, "--mode bogus: needs --model or --backend"), "%s", err);
  /* With a model (calibrated here, once), the modes it has are named. */
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "XDG_CACHE_HOME=%s %s analyze --backend "
           "reference --mode bogus " DATA "/copies.json 2>&1 >/dev/null; "
           "echo rc=$?",
           dir, RP_TEST_TOOL);
  FILE *p = popen(cmd, "r");
  size_t len = fread(err, 1, sizeof err - 1, p);
  err[len] = 0;
  pclose(p);
  cr_assert(strstr(err, "--mode bogus: no such mode in the model (its "
                        "modes: default serial)") &&
                strstr(err, "rc=1"),
            "%s", err);
  /* A cache that cannot be written: said, and the analysis still runs. */
  snprintf(cmd, sizeof cmd,
           "XDG_CACHE_HOME=/proc/nonexistent %s analyze "
           "--backend reference " DATA "/copies.json 2>&1 >/dev/null; "
           "echo rc=$?",
           RP_TEST_TOOL);
  p = popen(cmd, "r");
  len = fread(err, 1, sizeof err - 1, p);
  err[len] = 0;
  pclose(p);
  cr_assert(strstr(err, "reprise: not cached after all: /proc/nonexistent/"
                        "reprise/") &&
                strstr(err, "rc=0"),
            "%s", err);
  rm_tree();
}
