/* The registry: one table per op, defined beside the op's front-end (src/api/<op>.c), each
 * the concatenation of its backend files' row groups. The public queries, the dispatcher,
 * the CLI's list, the tests and the benchmark all read it here. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static const mh_op_table *const tables[MH_OP_COUNT] = {
    [MH_OP_CONV1D] = &mh_conv1d_table,
    [MH_OP_CONV2D] = &mh_conv2d_table,
    [MH_OP_TRANSPOSE] = &mh_transpose_table,
    [MH_OP_COALESCING] = &mh_coalescing_table,
    [MH_OP_MATMUL] = &mh_matmul_table,
    [MH_OP_REDUCE] = &mh_reduce_table,
    [MH_OP_HISTOGRAM] = &mh_histogram_table,
    [MH_OP_SEPFILTER] = &mh_sepfilter_table,
    [MH_OP_RANK] = &mh_rank_table,
};

static const mh_op_table *table_of(mh_op op)
{
    return ((int)op >= 0 && op < MH_OP_COUNT) ? tables[op] : NULL;
}

size_t mh_row_count(mh_op op)
{
    const mh_op_table *t = table_of(op);
    size_t total = 0;
    for (size_t g = 0; t && g < t->ngroups; ++g) {
        size_t n = 0;
        t->groups[g](&n);
        total += n;
    }
    return total;
}

const mh_row *mh_row_at(mh_op op, size_t i)
{
    const mh_op_table *t = table_of(op);
    for (size_t g = 0; t && g < t->ngroups; ++g) {
        size_t n = 0;
        const mh_row *rows = t->groups[g](&n);
        if (i < n) return &rows[i];
        i -= n;
    }
    return NULL;
}

const mh_row *mh_row_of(const mh_variant_info *info) { return (const mh_row *)info; }

int mh_variant_is_demonstration(const mh_variant_info *info)
{
    return info && (mh_row_of(info)->flags & MH_ROW_DEMONSTRATION) != 0;
}

int mh_variant_is_reduced_precision(const mh_variant_info *info)
{
    return info && (mh_row_of(info)->flags & MH_ROW_REDUCED_PRECISION) != 0;
}

mh_precision mh_variant_precision(const mh_variant_info *info)
{
    return info && (mh_row_of(info)->flags & MH_ROW_NORMWISE) ? MH_PRECISION_NORMWISE : MH_PRECISION_PER_ELEMENT;
}

unsigned mh_variant_takes(const mh_variant_info *info)
{
    if (!info) return 0u;
    unsigned takes = 0u; /* the row's flags that are MH_TAKES_ bits: those mh_takes_name names */
    for (unsigned b = 0; b < 32; ++b)
        if ((mh_row_of(info)->flags >> b & 1u) && mh_takes_name(1u << b)) takes |= 1u << b;
    return takes;
}

const char *mh_takes_name(unsigned bit)
{
    switch (bit) {
    case MH_TAKES_IMAGE_DTYPES: return "image dtypes";
    case MH_TAKES_LARGE_FILTERS: return "large filters";
    case MH_TAKES_ANY_REDUCTION: return "any reduction";
    case MH_TAKES_WEIGHTS: return "weights";
    case MH_TAKES_FLOAT64: return "float64";
    case MH_TAKES_FLOAT16: return "float16";
    case MH_TAKES_BFLOAT16: return "bfloat16";
    case MH_TAKES_BORDER_MODES: return "border modes";
    case MH_TAKES_SCIPY_SUMS: return "scipy sums";
    case MH_TAKES_VOLUMES: return "volumes";
    default: return NULL;
    }
}

const char *mh_rows_with(mh_op op, unsigned flags, char *buf, size_t len)
{
    size_t used = 0, count = 0, total = 0;
    for (size_t i = 0; i < mh_variant_count(op); ++i)
        total += (mh_row_of(mh_variant(op, i))->flags & flags) == flags;
    buf[0] = '\0';
    for (size_t i = 0; i < mh_variant_count(op) && used < len; ++i) {
        const mh_variant_info *v = mh_variant(op, i);
        if ((mh_row_of(v)->flags & flags) != flags) continue;
        const char *shortname = strchr(v->name, '/') ? strchr(v->name, '/') + 1 : v->name;
        ++count;
        const int n = snprintf(buf + used, len - used, "%s%s", count == 1 ? "" : count == total ? " and " : ", ",
                               shortname);
        if (n > 0) used += (size_t)n;
    }
    return count ? buf : "none";
}

const char *mh_op_name(mh_op op)
{
    const mh_op_table *t = table_of(op);
    return t ? t->name : "unknown-op";
}

size_t mh_variant_count(mh_op op) { return mh_row_count(op); }

const mh_variant_info *mh_variant(mh_op op, size_t index)
{
    const mh_row *r = mh_row_at(op, index);
    return r ? &r->info : NULL;
}

const mh_variant_info *mh_variant_lookup(mh_op op, const char *name)
{
    const mh_op_table *t = table_of(op);
    if (!t || !name) return NULL;
    size_t oplen = strlen(t->name);
    /* "conv1d/smem" and "smem" name the same variant */
    if (strncmp(name, t->name, oplen) == 0 && name[oplen] == '/') name += oplen + 1;
    for (size_t g = 0; g < t->ngroups; ++g) { /* one pass over the groups: auto looks up on every call */
        size_t n = 0;
        const mh_row *rows = t->groups[g](&n);
        for (size_t i = 0; i < n; ++i)
            if (strcmp(rows[i].info.name + oplen + 1, name) == 0) return &rows[i].info;
    }
    return NULL;
}

const mh_variant_info *mh_variant_find(const char *name)
{
    if (!name) return NULL;
    for (int op = 0; op < MH_OP_COUNT; ++op) {
        size_t oplen = strlen(tables[op]->name);
        if (strncmp(name, tables[op]->name, oplen) == 0 && name[oplen] == '/')
            return mh_variant_lookup((mh_op)op, name);
    }
    return NULL;
}

const mh_op_table *mh_op_table_of(mh_op op) { return table_of(op); }
