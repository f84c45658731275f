/* The mpi backend's model of a replay (rp__mpi_simulate, issue 35): task
 * lists made by hand on 2 and 4 ranks, their predicted times worked out
 * by hand below. No MPI is started: the simulation needs none.
 *
 * Model in every test: launch 5 us, 1 us per task, latency 10 us,
 * 1 GB/s (1000 bytes per us): a 1000-byte message arrives 11 us after
 * its pack ends. Packs cost 2 us, unpacks 3 us. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "rp_mpi.h"

static const rp_mpi_net NET = {10, 1, 1, 5};

static rp_mpi_task work(double us) {
  return (rp_mpi_task){.kind = RP_MPI_WORK, .us = us};
}
static rp_mpi_task send(int peer, int tag) {
  return (rp_mpi_task){
      .kind = RP_MPI_SEND, .us = 2, .peer = peer, .tag = tag, .bytes = 1000};
}
static rp_mpi_task recv(int peer, int tag) {
  return (rp_mpi_task){
      .kind = RP_MPI_RECV, .us = 3, .peer = peer, .tag = tag, .bytes = 1000};
}

static void ranks_are(const rp_mpi_list *l, int nr, const double *want) {
  double got[8];
  cr_assert_eq(rp__mpi_simulate(l, nr, &NET, got), RP_OK);
  for (int r = 0; r < nr; r++)
    cr_assert_float_eq(got[r], want[r], 1e-9, "rank %d: %g us, not %g", r,
                       got[r], want[r]);
}

/* Two ranks, two steps of boundary slices exchanging halos, each rank's
 * list: send, receive, boundary (after the receive), send (after the
 * boundary), receive, boundary. Rank 1's boundary costs 40 us, rank 0's
 * 20: rank 0 waits for its late neighbour in step 2.
 * Step 1: both sends 5 -> 8 (arrive 19); receives from 8, wait, end
 * 19 + 3 = 22; boundaries 22 -> 43 (rank 0), 22 -> 63 (rank 1).
 * Step 2: rank 0 sends 43 -> 46 (arrives 57), rank 1 63 -> 66 (arrives
 * 77). Rank 0's receive 46 -> 77 + 3 = 80, boundary 80 -> 101. Rank 1's
 * receive 66 -> max(67, 57) + 3 = 70, boundary 70 -> 91. */
Test(mpi_model, two_ranks_boundary_chain_late_neighbour) {
  rp_mpi_task t[2][6];
  static const uint32_t succ[] = {2, 3}; /* receive -> boundary -> send */
  rp_mpi_list l[2];
  for (int r = 0; r < 2; r++) {
    double b = r ? 40 : 20;
    t[r][0] = send(1 - r, 0);
    t[r][1] = recv(1 - r, 0);
    t[r][2] = work(b);
    t[r][3] = send(1 - r, 1);
    t[r][4] = recv(1 - r, 1);
    t[r][5] = work(20);
    t[r][1].s0 = 0, t[r][1].ns = 1;
    t[r][2].s0 = 1, t[r][2].ns = 1;
    l[r] = (rp_mpi_list){t[r], 6, succ, 1};
  }
  ranks_are(l, 2, (const double[]){101, 91});
}

/* An interior that hides the message: send, interior (30 us), receive,
 * boundary (10 us), on two ranks alike. Send 5 -> 8, the message arrives
 * 19; interior 8 -> 39; the receive 39 -> max(40, 19) + 3 = 43 (no wait);
 * boundary 43 -> 54. Left whole (send, receive, the kernel 40 us): the
 * receive 8 -> 19 + 3 = 22, the kernel 22 -> 63. With a latency of 100 us
 * (arrival 109) the cut list ends 112 + 11 = 123: 31 us of it hidden. */
Test(mpi_model, interior_hides_the_message) {
  rp_mpi_task cut[2][4], whole[2][3];
  rp_mpi_list lc[2], lw[2];
  for (int r = 0; r < 2; r++) {
    cut[r][0] = send(1 - r, 0);
    cut[r][1] = work(30);
    cut[r][2] = recv(1 - r, 0);
    cut[r][3] = work(10);
    whole[r][0] = send(1 - r, 0);
    whole[r][1] = recv(1 - r, 0);
    whole[r][2] = work(40);
    lc[r] = (rp_mpi_list){cut[r], 4, NULL, 1};
    lw[r] = (rp_mpi_list){whole[r], 3, NULL, 1};
  }
  ranks_are(lc, 2, (const double[]){54, 54});
  ranks_are(lw, 2, (const double[]){63, 63});
  rp_mpi_net slow = NET;
  slow.latency_us = 100;
  double got[2];
  cr_assert_eq(rp__mpi_simulate(lc, 2, &slow, got), RP_OK);
  cr_assert_float_eq(got[0], 123, 1e-9, "%g", got[0]);
  cr_assert_float_eq(got[1], 123, 1e-9, "%g", got[1]);
}

/* Four ranks in a line, two steps of halo exchange; per step and rank:
 * a send to each neighbour (lower first), the interior, a receive from
 * each neighbour, the boundary (10 us). Interiors 30 us, rank 2's 100.
 * Step 1: rank 0: S 5-8 (to 1, arr 19), I 8-39, R 39-43, B 43-54.
 *   rank 1: S 5-8 (to 0, arr 19), S 8-11 (to 2, arr 22), I 11-42,
 *   R(0) 42-46, R(2) 46-50 (rank 2's first send arrived 19), B 50-61.
 *   rank 2: S 5-8 (to 1), S 8-11 (to 3, arr 22), I 11-112, R(1) 112-116,
 *   R(3) 116-120, B 120-131.
 *   rank 3: S 5-8 (to 2, arr 19), I 8-39, R(2) 39-43 (arr 22), B 43-54.
 * Step 2: rank 0: S 54-57 (arr 68), I 57-88, R(1) 88-92 (rank 1's send
 *   61-64 arrived 75), B 92-103; its sends arrived by 68: 103.
 *   rank 1: S 61-64 (arr 75), S 64-67 (arr 78), I 67-98, R(0) 98-102,
 *   R(2) 102 -> 145 + 3 = 148 (rank 2's send 131-134), B 148-159: 159.
 *   rank 2: S 131-134, S 134-137, I 137-238, R(1) 238-242, R(3) 242-246
 *   (rank 3's 54-57 arrived 68), B 246-257: 257.
 *   rank 3: S 54-57, I 57-88, R(2) 88 -> 148 + 3 = 151 (rank 2's send
 *   134-137), B 151-162: 162.
 * Rank 0 does not wait for rank 2: no chain through the ranks. */
Test(mpi_model, four_ranks_late_rank_reaches_its_neighbours_only) {
  rp_mpi_task t[4][16];
  uint32_t succ[4][16];
  rp_mpi_list l[4];
  for (int r = 0; r < 4; r++) {
    uint32_t n = 0, ns = 0;
    for (int s = 0; s < 2; s++) {
      uint32_t first_recv = 0;
      for (int nb = r - 1; nb <= r + 1; nb += 2)
        if (nb >= 0 && nb < 4)
          t[r][n++] = send(nb, s);
      t[r][n++] = work(r == 2 ? 100 : 30);
      first_recv = n;
      for (int nb = r - 1; nb <= r + 1; nb += 2)
        if (nb >= 0 && nb < 4)
          t[r][n++] = recv(nb, s);
      t[r][n] = work(10);
      for (uint32_t k = first_recv; k < n; k++) { /* receives -> boundary */
        t[r][k].s0 = ns;
        t[r][k].ns = 1;
        succ[r][ns++] = n;
      }
      n++;
    }
    l[r] = (rp_mpi_list){t[r], n, succ[r], 1};
  }
  ranks_are(l, 4, (const double[]){103, 159, 257, 162});
}

/* Two threads run two independent 10 us tasks at once: 5 + 11 = 16 us;
 * one thread: 5 + 11 + 11 = 27. */
Test(mpi_model, threads_run_ready_tasks_at_once) {
  rp_mpi_task t[2] = {work(10), work(10)};
  rp_mpi_list l = {t, 2, NULL, 2};
  ranks_are(&l, 1, (const double[]){16});
  l.threads = 1;
  ranks_are(&l, 1, (const double[]){27});
}

/* Lists that are not a replay: a receive nobody sends, a send to a rank
 * that does not exist, a cycle, a negative cost. */
Test(mpi_model, rejects_what_is_not_a_replay) {
  double got[2];
  rp_mpi_task a[1] = {recv(1, 0)}, b[1] = {work(1)};
  rp_mpi_list l[2] = {{a, 1, NULL, 1}, {b, 1, NULL, 1}};
  cr_assert_eq(rp__mpi_simulate(l, 2, &NET, got), RP_EINVAL);
  a[0] = send(2, 0);
  cr_assert_eq(rp__mpi_simulate(l, 2, &NET, got), RP_EINVAL);
  rp_mpi_task c[2] = {work(1), work(1)};
  static const uint32_t cyc[] = {1, 0};
  c[0].s0 = 0, c[0].ns = 1;
  c[1].s0 = 1, c[1].ns = 1;
  rp_mpi_list lc = {c, 2, cyc, 1};
  cr_assert_eq(rp__mpi_simulate(&lc, 1, &NET, got), RP_EINVAL);
  b[0] = work(-1);
  cr_assert_eq(rp__mpi_simulate(&l[1], 1, &NET, got), RP_EINVAL);
  cr_assert_eq(rp__mpi_simulate(NULL, 1, &NET, got), RP_EINVAL);
}
