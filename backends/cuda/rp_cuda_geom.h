/* Launch geometry of the cuda backend (internal): the number of threads per
 * block from occupancy figures and the kernel's hints, and the block shape
 * from that number and the index space. Pure C, no CUDA: unit-tested on
 * machines without a GPU. */
#ifndef RP_CUDA_GEOM_H
#define RP_CUDA_GEOM_H

#include <stdint.h>

/* Candidate threads per block, smallest first. */
#define RP_CU_NCAND 5
extern const unsigned rp__cu_cand[RP_CU_NCAND];

/* Picks threads per block among rp__cu_cand[i] for i < ncand (those the
 * kernel may use): blocks[i] is how many blocks of that size fit on one
 * multiprocessor (the occupancy API), sm_threads the multiprocessor's
 * thread limit. The highest occupancy (blocks * threads / sm_threads) wins;
 * ties go to the candidate nearest the hint's target: 512 for
 * RP_HINT_MEMORY_BOUND, 128 for RP_HINT_COMPUTE_BOUND, 256 otherwise.
 * Returns the threads (0 when ncand is 0); *occ receives the occupancy in
 * [0, 1]. */
unsigned rp__cu_pick_threads(const int *blocks, unsigned ncand, int sm_threads,
                             unsigned hint, double *occ);

/* The block shape for @p threads (a power of two >= 32) over the index
 * space n[3]: rank 1 (n[1] = n[2] = 1): t x 1 x 1; rank 2 (n[2] = 1):
 * 32 x t/32 x 1; rank 3: 32 x 4 x t/128. An axis is then halved while half
 * of it still covers its extent (x no lower than 32 in rank 1), so a block
 * is never much larger than the index space needs. */
void rp__cu_shape(unsigned threads, const uint64_t n[3], unsigned out[3]);

#endif
