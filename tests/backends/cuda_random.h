/* Random graphs for the cuda backend's tests (test_cuda.c on a GPU,
 * cuda_logic.c on the fake runtime of fake_cudart.c), as tests/util.c
 * builds one, over the kernels given: mix (in A, inout B, scalar offA,
 * scalar offB) and bump (inout A, scalar off) as tests/util.h describes
 * tu_mix and tu_bump, bump_host the same as a host wrapper (NULL: bump).
 * Kernels on ndev devices over byte ranges, explicit copies, peer copies,
 * host tasks and after edges, then a sync of every buffer. Include after
 * criterion and util.h. */
#ifndef RP_TEST_CUDA_RANDOM_H
#define RP_TEST_CUDA_RANDOM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cuda_random_graph(tu_random *r, uint64_t seed, unsigned nbuf,
                              uint64_t bsize, unsigned nops, unsigned ndev,
                              const rp_kernel *mix, const rp_kernel *bump,
                              const rp_kernel *bump_host) {
  memset(r, 0, sizeof *r);
  r->nbuf = nbuf;
  r->bsize = bsize;
  r->buf = calloc(nbuf, sizeof *r->buf);
  r->hargs = calloc(nops + 1, sizeof *r->hargs);
  TU_OK(NULL, rp_graph_create(&r->g, 0));
  for (unsigned b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "B%u", b);
    r->buf[b] = malloc(bsize);
    TU_OK(r->g, rp_buffer_register(r->g, name, r->buf[b], bsize, NULL));
  }
  tu_random_reset(r, seed);
  uint64_t s = seed + 77;
  for (unsigned i = 0; i < nops; i++) {
    unsigned kind = (unsigned)(tu_rand(&s) % 10);
    int dev = (int)(tu_rand(&s) % ndev);
    rp_buf a = (rp_buf)(tu_rand(&s) % nbuf), b = (rp_buf)(tu_rand(&s) % nbuf);
    uint64_t len = 1 + tu_rand(&s) % (bsize / 2);
    uint64_t oa = tu_rand(&s) % (bsize - len + 1);
    uint64_t ob = tu_rand(&s) % (bsize - len + 1);
    if (a == b) {
      oa = 0;
      ob = len + tu_rand(&s) % (bsize - 2 * len + 1);
    }
    rp_node after[1];
    rp_op_opts o = RP_OP_OPTS_WITH(.after = after);
    uint32_t nn = rp_graph_num_nodes(r->g);
    if (nn && tu_rand(&s) % 8 == 0) {
      after[0] = (rp_node)(tu_rand(&s) % nn);
      o.nafter = 1;
    }
    if (kind < 4) {
      rp_arg args[4] = {rp_arg_buf(rp_bytes(a, oa, len)),
                        rp_arg_buf(rp_bytes(b, ob, len)), rp_arg_i64(0),
                        rp_arg_i64(0)};
      args[2].value.u64 = oa;
      args[3].value.u64 = ob;
      TU_OK(r->g, rp_record_kernel(r->g, mix, dev, rp_dims3(len, 1, 1), args,
                                   &o, NULL));
    } else if (kind < 6) {
      rp_arg args[2] = {rp_arg_buf(rp_bytes(b, ob, len)), rp_arg_i64(0)};
      args[1].value.u64 = ob;
      const rp_kernel *k = kind == 5 && bump_host ? bump_host : bump;
      TU_OK(r->g, rp_record_kernel(r->g, k, dev, rp_dims3(len, 1, 1), args, &o,
                                   NULL));
    } else if (kind == 6) {
      TU_OK(r->g, rp_record_copy_to_device(r->g, rp_bytes(a, oa, len), dev, &o,
                                           NULL));
    } else if (kind == 7) {
      TU_OK(r->g,
            rp_record_copy_to_host(r->g, rp_bytes(a, oa, len), dev, &o, NULL));
    } else if (kind == 8 && ndev > 1) {
      TU_OK(r->g, rp_record_copy_peer(r->g, rp_bytes(a, oa, len), dev,
                                      (dev + 1) % (int)ndev, &o, NULL));
    } else {
      tu_host_arg *h = &r->hargs[i];
      h->off = ob;
      h->len = len;
      rp_access acc = {rp_bytes(b, ob, len), RP_INOUT};
      TU_OK(r->g, rp_record_host(r->g, tu_host_bump, h, &acc, 1, &o, NULL));
    }
  }
  for (unsigned b = 0; b < nbuf; b++)
    TU_OK(r->g, rp_record_sync_host(r->g, rp_whole(b), NULL));
  TU_OK(r->g, rp_graph_end(r->g));
}

/* Replays random graph r (made from seed) with the reference and with
 * the exec mk(g, mode, ctx) gives in each mode (graph, streams, serial),
 * 3 replays each from the same initial contents, and compares every
 * byte. */
static void cuda_check_random(tu_random *r, uint64_t seed,
                              rp_exec *(*mk)(const rp_graph *g,
                                             const char *mode, void *ctx),
                              void *ctx) {
  static const char *modes[] = {"graph", "streams", "serial"};
  uint8_t *want = malloc(r->nbuf * r->bsize);
  TU_OK(r->g, rp_replay_reference(r->g, 3));
  for (unsigned b = 0; b < r->nbuf; b++)
    memcpy(want + b * r->bsize, r->buf[b], r->bsize);
  for (unsigned m = 0; m < 3; m++) {
    tu_random_reset(r, seed);
    rp_exec *x = mk(r->g, modes[m], ctx);
    rp_status s = rp_exec_run(x, 3);
    cr_assert_eq(s, RP_OK, "seed %llu, mode %s: run: %s: %s",
                 (unsigned long long)seed, modes[m], rp_status_name(s),
                 rp_exec_error(x));
    for (unsigned b = 0; b < r->nbuf; b++)
      cr_assert_eq(memcmp(want + b * r->bsize, r->buf[b], r->bsize), 0,
                   "seed %llu, mode %s: buffer B%u differs",
                   (unsigned long long)seed, modes[m], b);
    rp_exec_destroy(x);
  }
  free(want);
}

#endif
