/* vigil — names and lookups for the ontology's stable ids. */
#include <stddef.h>
#include <string.h>

#include "name_table.h"
#include "vigil/ontology.h"

static const char *const layer_names[VIGIL_LAYER_COUNT + 1] = {
    [VIGIL_LAYER_POSIX] = "posix",
    [VIGIL_LAYER_STDIO] = "stdio",
    [VIGIL_LAYER_MPIIO] = "mpiio",
};

/* Unused ids stay zero: a NULL name, layer 0. */
const struct vigil_op_info vigil_op_table[VIGIL_OP_MAX_ID + 1] = {
#define VIGIL_OP_ENTRY(suffix, id, layer, name, cls)                                               \
    [id] = {name, VIGIL_LAYER_##layer, VIGIL_OP_##cls},
    VIGIL_OPERATIONS(VIGIL_OP_ENTRY)
#undef VIGIL_OP_ENTRY
};

struct attribute_info {
    const char *name;
    const char *unit;
};

static const struct attribute_info attribute_table[] = {
#define VIGIL_ATTRIBUTE_ENTRY(suffix, id, name, unit) [id] = {name, unit},
    VIGIL_ATTRIBUTES(VIGIL_ATTRIBUTE_ENTRY)
#undef VIGIL_ATTRIBUTE_ENTRY
};
#define ATTRIBUTE_TABLE_SIZE (sizeof attribute_table / sizeof attribute_table[0])

const char *vigil_layer_name(unsigned layer)
{
    return layer <= VIGIL_LAYER_COUNT ? layer_names[layer] : NULL;
}

unsigned vigil_layer_from_name(const char *name)
{
    return name_table_find(layer_names, VIGIL_LAYER_COUNT, name);
}

const char *vigil_op_name(unsigned op)
{
    return vigil_op_is_valid(op) ? vigil_op_table[op].name : NULL;
}

unsigned vigil_op_from_name(unsigned layer, const char *name)
{
    if (name == NULL)
        return 0;
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++)
        if (vigil_op_table[op].name != NULL && vigil_op_table[op].layer == layer &&
            strcmp(vigil_op_table[op].name, name) == 0)
            return op;
    return 0;
}

const char *vigil_attribute_name(unsigned attribute)
{
    return attribute < ATTRIBUTE_TABLE_SIZE ? attribute_table[attribute].name : NULL;
}

const char *vigil_attribute_unit(unsigned attribute)
{
    return attribute < ATTRIBUTE_TABLE_SIZE ? attribute_table[attribute].unit : NULL;
}

unsigned vigil_attribute_from_name(const char *name)
{
    for (unsigned a = 1; a < ATTRIBUTE_TABLE_SIZE; a++)
        if (name != NULL && attribute_table[a].name != NULL &&
            strcmp(attribute_table[a].name, name) == 0)
            return a;
    return 0;
}
