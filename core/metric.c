/* vigil — the metric catalogue. */
#include <string.h>

#include "vigil/metric.h"

GQuark vigil_metric_error_quark(void)
{
    return g_quark_from_static_string("vigil-metric-error-quark");
}

struct vigil_metric_catalog {
    GPtrArray *by_id;    /* struct vigil_metric_desc *; index = id - 1 */
    GHashTable *by_name; /* name → struct vigil_metric_desc * (borrowed) */
};

static void metric_desc_free(gpointer data)
{
    struct vigil_metric_desc *m = data;
    g_free(m->name);
    g_free(m->unit);
    g_free(m->source);
    g_free(m);
}

vigil_metric_catalog *vigil_metric_catalog_new(void)
{
    vigil_metric_catalog *c = g_new0(vigil_metric_catalog, 1);
    c->by_id = g_ptr_array_new_with_free_func(metric_desc_free);
    c->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    return c;
}

void vigil_metric_catalog_free(vigil_metric_catalog *c)
{
    if (c == NULL)
        return;
    g_hash_table_destroy(c->by_name);
    g_ptr_array_free(c->by_id, TRUE);
    g_free(c);
}

bool vigil_metric_name_is_valid(const char *name)
{
    if (name == NULL || !g_ascii_islower(name[0]) || strlen(name) > VIGIL_METRIC_NAME_MAX)
        return false;
    for (const char *p = name; *p; p++)
        if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '_' && *p != '.' && *p != '-')
            return false;
    return true;
}

static bool text_is_valid(const char *text)
{
    return text != NULL && strlen(text) <= VIGIL_METRIC_TEXT_MAX && g_utf8_validate(text, -1, NULL);
}

uint32_t vigil_metric_register(vigil_metric_catalog *c, const char *name, const char *unit,
                               enum vigil_metric_kind kind, const char *source,
                               enum vigil_metric_origin origin, GError **error)
{
    if (!vigil_metric_name_is_valid(name)) {
        g_set_error(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_INVALID,
                    "metric name \"%s\" is not valid: it must start with a lower-case letter and "
                    "hold only a-z, 0-9, '_', '.' and '-', at most %d of them",
                    name ? name : "(null)", VIGIL_METRIC_NAME_MAX);
        return 0;
    }
    if (!text_is_valid(unit) || !text_is_valid(source)) {
        g_set_error(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_INVALID,
                    "metric %s: unit and source must be UTF-8 text of at most %d bytes", name,
                    VIGIL_METRIC_TEXT_MAX);
        return 0;
    }
    if (vigil_metric_kind_name(kind) == NULL || vigil_metric_origin_name(origin) == NULL) {
        g_set_error(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_INVALID,
                    "metric %s: unknown kind %d or origin %d", name, kind, origin);
        return 0;
    }
    const struct vigil_metric_desc *known = g_hash_table_lookup(c->by_name, name);
    if (known != NULL) {
        if (known->kind == kind && known->origin == origin && strcmp(known->unit, unit) == 0 &&
            strcmp(known->source, source) == 0)
            return known->id;
        g_set_error(error, VIGIL_METRIC_ERROR, VIGIL_METRIC_ERROR_CONFLICT,
                    "metric %s is already registered as a %s %s in %s from %s; it cannot now be "
                    "a %s %s in %s from %s",
                    name, vigil_metric_origin_name(known->origin),
                    vigil_metric_kind_name(known->kind), known->unit, known->source,
                    vigil_metric_origin_name(origin), vigil_metric_kind_name(kind), unit, source);
        return 0;
    }
    struct vigil_metric_desc *m = g_new0(struct vigil_metric_desc, 1);
    m->id = c->by_id->len + 1;
    m->kind = kind;
    m->origin = origin;
    m->name = g_strdup(name);
    m->unit = g_strdup(unit);
    m->source = g_strdup(source);
    g_ptr_array_add(c->by_id, m);
    g_hash_table_insert(c->by_name, m->name, m);
    return m->id;
}

const struct vigil_metric_desc *vigil_metric_get(const vigil_metric_catalog *c, uint32_t id)
{
    if (id == 0 || id > c->by_id->len)
        return NULL;
    return g_ptr_array_index(c->by_id, id - 1);
}

const struct vigil_metric_desc *vigil_metric_lookup(const vigil_metric_catalog *c, const char *name)
{
    return g_hash_table_lookup(c->by_name, name);
}

uint32_t vigil_metric_count(const vigil_metric_catalog *c)
{
    return c->by_id->len;
}

static const char *const kind_names[] = {
    [VIGIL_METRIC_COUNTER] = "counter",
    [VIGIL_METRIC_GAUGE] = "gauge",
};

static const char *const origin_names[] = {
    [VIGIL_METRIC_MEASURED] = "measured",
    [VIGIL_METRIC_ESTIMATED] = "estimated",
};

/* names[value], NULL where the table has no name for it. */
static const char *name_of(const char *const *names, guint count, unsigned value)
{
    return value < count ? names[value] : NULL;
}

const char *vigil_metric_kind_name(enum vigil_metric_kind kind)
{
    return name_of(kind_names, G_N_ELEMENTS(kind_names), kind);
}

const char *vigil_metric_origin_name(enum vigil_metric_origin origin)
{
    return name_of(origin_names, G_N_ELEMENTS(origin_names), origin);
}
