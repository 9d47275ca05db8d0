/* auto's rules for one GPU: every threshold and cost-model weight the ops' `auto` reads, in one
 * struct whose fields auto_rules.def lists, each once with its meaning. The tables are generated (src/core/auto_rules_table.c) by `python3 scripts/tune.py
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

/* The C types of auto_rules.def's kinds. */
typedef double mh_rule_NUMBER;
typedef int mh_rule_INT;
typedef mh_auto_steps mh_rule_STEPS;

typedef struct mh_auto_rules {
    const char *device; /* the GPU the numbers were measured on (cudaDeviceProp.name) */
    const char *source; /* the sweeps they come from */
    int fallback;       /* 1: the table for devices that have none */
    /* every rule of auto_rules.def, named section_key (conv2d_walk7_min_outputs) */
#define MH_RULE(section, key, kind, meaning) mh_rule_##kind section##_##key;
#include "auto_rules.def"
#undef MH_RULE
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
