/* The registry: one table per op, each defined beside its op's front-end (src/api/<op>.c).
 * The public queries, the CLI's list, the tests and the benchmark all read it here. */
#include "internal.h"

#include <string.h>

static const mh_op_table *const tables[MH_OP_COUNT] = {
    [MH_OP_CONV1D] = &mh_conv1d_table,
};

static const mh_op_table *table_of(mh_op op)
{
    return (op >= 0 && op < MH_OP_COUNT) ? tables[op] : NULL;
}

size_t mh_variant_count(mh_op op)
{
    const mh_op_table *t = table_of(op);
    return t ? t->count() : 0;
}

const mh_variant_info *mh_variant(mh_op op, size_t index)
{
    const mh_op_table *t = table_of(op);
    return (t && index < t->count()) ? t->info_at(index) : NULL;
}

const mh_variant_info *mh_variant_lookup(mh_op op, const char *name)
{
    const mh_op_table *t = table_of(op);
    if (!t || !name) return NULL;
    size_t oplen = strlen(t->name);
    /* "conv1d/smem" and "smem" name the same variant */
    if (strncmp(name, t->name, oplen) == 0 && name[oplen] == '/') name += oplen + 1;
    for (size_t i = 0; i < t->count(); ++i) {
        const mh_variant_info *v = t->info_at(i);
        if (strcmp(v->name + oplen + 1, name) == 0) return v;
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
