/* auto's rules for one GPU: every threshold and cost-model weight the ops' `auto` reads, in one
 * struct. The tables are generated (src/core/auto_rules_table.c) by `python3 scripts/tune.py
 * --write` from bench/results/<GPU>.auto.json, one file per GPU they were measured on; a device
 * without its own table uses the one marked as the fallback (docs/auto.md says what each number
 * is and how it was measured). `memhier explain` prints the rule and the numbers a call meets. */
#ifndef MH_AUTO_RULES_H
#define MH_AUTO_RULES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MH_AUTO_STEPS = 5 };

/* A threshold that falls as a problem grows: below samples[i] (the first that holds), take
 * value[i]; samples 0 ends the list (its value then holds for every larger problem). */
typedef struct mh_auto_steps {
    double samples[MH_AUTO_STEPS];
    double value[MH_AUTO_STEPS];
} mh_auto_steps;

typedef struct mh_auto_rules {
    const char *device; /* the GPU the numbers were measured on (cudaDeviceProp.name) */
    const char *source; /* the sweeps they come from */
    int fallback;       /* 1: the table for devices that have none */

    /* conv1d: fft-os above this k (fft-fused cannot hold the mask) */
    double conv1d_fft_os_above_k;
    /* fft-fused from any problem size above this k */
    double conv1d_fused_above_k;
    /* below it, fft-fused from the k that falls with batch x n (samples), regtile under it */
    mh_auto_steps conv1d_fused_from_k;
    /* inside fft-fused, one mask: real8192 from this k (by samples; HUGE_VAL: never), reg4096 under it */
    mh_auto_steps conv1d_real8192_from_k;

    /* conv2d/tc (tensor cores): considered from this many outputs ... */
    double conv2d_tc_min_outputs;
    /* ... with at least this many taps and the share below conv2d_tc_any_taps_outputs
     * outputs; from there any filter of 121 taps or more (mh_conv2d_tc_favoured) */
    double conv2d_tc_min_taps;
    double conv2d_tc_any_taps_outputs;
    /* ... but filters of one slice at S = 2 (6 and 7 columns) from this many taps (their share
     * still decides) */
    double conv2d_tc_one_slice_min_taps;
    /* the useful share of its tensor work it needs, by configuration: S outputs an A row, Q rows */
    double conv2d_tc_share_s4_q8, conv2d_tc_share_s4_q16, conv2d_tc_share_s2_q8, conv2d_tc_share_s2_q16,
        conv2d_tc_share_s2_q16_one_slice;
    /* tc's own configuration: Q = 16 from this many slices, and at one or three slices of S = 2
     * from this many filter rows */
    int conv2d_tc_q16_from_slices, conv2d_tc_q16_s2_from_rows;
    /* conv2d/lowrank first for a planned filter of more than conv2d_lowrank_min_taps taps (by
     * outputs: krows kcols; smaller ones are a copy with a little arithmetic, walk's, but on small
     * images walk's strips are too few to fill the GPU) whose terms cost at most this share of
     * the direct FMAs: rank (krows + kcols) <= share krows kcols */
    mh_auto_steps conv2d_lowrank_min_taps;
    double conv2d_lowrank_max_cost_share;
    /* ... and, of more than two terms, at most conv2d_lowrank_max_terms terms and this many FMAs
     * an output (their rings take the shared memory that holds blocks on the SMs) */
    double conv2d_lowrank_more_terms_fmas;
    int conv2d_lowrank_max_terms;
    /* below this many outputs a planned filter of more than conv2d_lowrank_min_taps goes to
     * lowrank first whatever its terms cost (one walk a column strip fills the GPU where the
     * direct rows' tiles are few) */
    double conv2d_lowrank_any_below_outputs;
    /* conv2d/fft-tile first for filters of at least this many taps (by outputs); a planned filter
     * lowrank takes stays on lowrank ahead of it while rank (kcols + 2 krows) is at most
     * conv2d_lowrank_before_fft_tile_cost (by outputs: lowrank's column pass costs about twice
     * its row pass a tap, and its passes repeat for every term, while fft-tile's work is the
     * same for any filter it takes) and krows at most conv2d_lowrank_before_fft_tile_max_rows
     * (by outputs: on a small image a block's segment is a few bands, and the krows - 1 rows it
     * reads ahead of them are most of its walk), and from conv2d_lowrank_own_min_outputs outputs
     * where it is one term or lowrank has an instance of its size (below, fft-tile's few tiles
     * are as quick) */
    mh_auto_steps conv2d_fft_tile_min_taps;
    mh_auto_steps conv2d_lowrank_before_fft_tile_cost;
    mh_auto_steps conv2d_lowrank_before_fft_tile_max_rows;
    double conv2d_lowrank_own_min_outputs;
    /* conv2d/walk first for a 7 x 7 filter it takes (float32, anchored within a column of its
     * centre) from this many outputs, ahead of the direct rows, tc and fft-tile (its strips fill
     * the GPU from there); a planned filter lowrank takes, ahead of lowrank from the second */
    double conv2d_walk7_min_outputs, conv2d_walk7_planned_min_outputs;

    /* matmul: tf32x3-wgmma where all four hold */
    double matmul_tc_min_k, matmul_tc_max_k, matmul_tc_min_work, matmul_tc_min_outputs;
    /* its block width: a round of 128 x 256, 128 x 128 and 128 x 64 blocks over the SMs weighs
     * this many rounds of 128 x 128 */
    double matmul_wgmma_round_256, matmul_wgmma_round_128, matmul_wgmma_round_64;
    /* tf32-wgmma's 128 x 256 blocks run in pairs from this k */
    double matmul_wgmma_pairs_min_k;

    /* histogram: bytes over more than this many bins take lane-private first */
    int histogram_lane_private_above_bins;
} mh_auto_rules;

/* The table measured on the device named `name`, or the fallback. */
const mh_auto_rules *mh_auto_rules_for(const char *name);
/* Every table (the fallback among them). */
const mh_auto_rules *mh_auto_rules_at(size_t i, size_t *count);

/* The step's value for this size (the last step's when every bound is passed). */
double mh_auto_step(const mh_auto_steps *s, double samples);

#ifdef __cplusplus
}
#endif

#endif
