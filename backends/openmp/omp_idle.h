/* How the OpenMP backend's idle threads wait (issue 31): the policy, a
 * pure function of counts (tests/backends/test_openmp_idle.c tables it),
 * and the parse of the machine's runnable count it is fed from. */
#ifndef RP_OMP_IDLE_H
#define RP_OMP_IDLE_H

/* SPIN: the team has its cores, an idle thread looks for work for a while
 * (100 µs) before it sleeps, and a team thread waits 1 ms for the next
 * launch. YIELD: it cannot have them (more threads than usable CPUs, or
 * other runnable threads take some): at most RP_OMP_SHORT_LOOKS looks in
 * a row, then a futex wait, so that a working thread gets the CPU. */
enum { RP_OMP_IDLE_SPIN = 0, RP_OMP_IDLE_YIELD = 1 };
#define RP_OMP_SHORT_LOOKS 4

/* The policy for a team of nth threads on ncpu usable CPUs (its CPU set)
 * of a machine with online CPUs, where others runnable threads that are
 * not the team's were seen (the fewest of the last two samples; < 0:
 * unknown). YIELD when nth > ncpu, or when the others' share of the
 * team's CPUs (others * ncpu / online, rounded down: they may run
 * anywhere) leaves fewer than nth of them; else SPIN (also when ncpu is
 * unknown, <= 0). */
int rp__omp_idle_policy(int nth, int ncpu, int online, int others);

/* The runnable count in text read from /proc/loadavg ("0.5 0.4 0.3 R/T
 * pid": R, every CPU's runnable threads, the reader included); -1 when
 * the text has no such field. */
int rp__omp_loadavg_running(const char *text);

#endif
