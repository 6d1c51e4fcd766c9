/* vigild — the segments of the node's running energy sum: each a stretch
 * from one source and one set of zones. node.energy_j goes on across them
 * without a jump; `vigil status` lists the last few, and a process whose
 * life spanned two says so with the "+"-joined sources of its figure. */
#include <math.h>
#include <string.h>

#include "energy_share.h"
#include "vigil/json_members.h"
#include "vigil/clock.h"

#define SOURCE_PREFIX "energy/"
#define MORE          "+…"

static gboolean sources_have(const char *sources, const char *source)
{
    size_t length = strlen(source);
    for (const char *p = sources; *p != '\0';) {
        const char *end = strchr(p, '+');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == length && memcmp(p, source, n) == 0)
            return TRUE;
        p += n + (end != NULL);
    }
    return FALSE;
}

void vigild_energy_sources_add(char *sources, size_t size, const char *source)
{
    if (source == NULL || source[0] == '\0' || sources_have(sources, source))
        return;
    size_t used = strlen(sources);
    if (used + (used > 0) + strlen(source) < size)
        g_snprintf(sources + used, size - used, "%s%s", used > 0 ? "+" : "", source);
}

void vigild_energy_sources_compact(const char *sources, char *out, size_t size)
{
    if (strlen(sources) < size) {
        g_strlcpy(out, sources, size);
        return;
    }
    char **names = g_strsplit(sources, "+", -1);
    GString *s = g_string_new(names[0]);
    for (guint i = 1; names[i] != NULL; i++) {
        const char *name =
            g_str_has_prefix(names[i], SOURCE_PREFIX) ? names[i] + strlen(SOURCE_PREFIX) : names[i];
        g_string_append_printf(s, "+%s", name);
    }
    if (s->len >= size) {
        /* Whole names only, and the mark that some are left out. */
        while (s->len + strlen(MORE) >= size) {
            char *plus = strrchr(s->str, '+');
            g_string_truncate(s, plus != NULL ? (gsize)(plus - s->str) : 0);
        }
        g_string_append(s, MORE);
    }
    g_strlcpy(out, s->str, size);
    g_string_free(s, TRUE);
    g_strfreev(names);
}

void vigild_energy_segment_start(struct vigild_energy_share *e, const char *source, int zone_kind,
                                 guint zone_count, uint64_t t_ns)
{
    if (e->segments->len >= VIGILD_ENERGY_SEGMENTS_KEPT)
        g_array_remove_index(e->segments, 0);
    struct vigild_energy_segment s = {
        .zone_kind = zone_kind,
        .zone_count = zone_count,
        .start_ns = t_ns,
        .start_j = e->node_energy_j,
        .number = ++e->segments_total,
    };
    g_strlcpy(s.source, source != NULL ? source : "", sizeof s.source);
    g_array_append_val(e->segments, s);
    if (e->segments_total > 1)
        g_message("energy: segment %" G_GUINT64_FORMAT " from %s (%u %s zone%s) at %.3f J",
                  s.number, s.source, zone_count,
                  zone_kind == 0   ? "psys"
                  : zone_kind == 1 ? "package and DRAM"
                                   : "estimate",
                  zone_count == 1 ? "" : "s", e->node_energy_j);
}

static const char *zone_kind_name(int zone_kind)
{
    switch (zone_kind) {
    case 0:
        return "psys";
    case 1:
        return "packages";
    case 2:
        return "estimate";
    default:
        return "none";
    }
}

void vigild_energy_segments_json(const struct vigild_energy_share *e, JsonBuilder *b)
{
    uint64_t now_ns = vigil_clock_monotonic_ns();
    uint64_t now_unix_ns = (uint64_t)g_get_real_time() * 1000;
    vigil_json_number(b, "total_j", e->node_energy_j);
    vigil_json_int(b, "segments_total", (gint64)e->segments_total);
    json_builder_set_member_name(b, "segments");
    json_builder_begin_array(b);
    for (guint i = 0; i < e->segments->len; i++) {
        const struct vigild_energy_segment *s =
            &g_array_index(e->segments, struct vigild_energy_segment, i);
        gboolean last = i + 1 == e->segments->len;
        json_builder_begin_object(b);
        vigil_json_int(b, "number", (gint64)s->number);
        vigil_json_string(b, "source", s->source);
        vigil_json_string(b, "zones", zone_kind_name(s->zone_kind));
        vigil_json_int(b, "zone_count", s->zone_count);
        vigil_json_int(b, "start_monotonic_ns", (gint64)s->start_ns);
        vigil_json_int(b, "start_unix_ns", (gint64)(now_unix_ns - (now_ns - s->start_ns)));
        vigil_json_number(b, "start_j", s->start_j);
        double end_j =
            last ? e->node_energy_j
                 : g_array_index(e->segments, struct vigild_energy_segment, i + 1).start_j;
        vigil_json_number(b, "energy_j", end_j - s->start_j);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}
