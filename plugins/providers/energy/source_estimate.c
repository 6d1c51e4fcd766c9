/* vigil — the energy provider's estimate: a linear model of power against
 * CPU utilisation from ROOT/proc/stat, sockets × (idle_w + (max_w − idle_w)
 * × u), integrated over each interval into energy.node_j, a COUNTER in
 * joules registered as ESTIMATED, so every output marks the figure. */
#include <string.h>

#include "energy_source.h"

/* The idle and busy ticks of /proc/stat's "cpu " line. */
struct cpu_ticks {
    guint64 idle; /* idle + iowait */
    guint64 busy; /* user nice system irq softirq steal */
};

struct estimate {
    double idle_w, max_w;
    gint64 sockets;
    struct vigil_provider_file stat; /* read at the tick's time: procstat's read is shared */
    uint32_t node_metric_id;
    gboolean stat_primed;
    struct cpu_ticks prev_ticks;
    guint64 prev_ns;
    double utilisation; /* of the last interval that had ticks */
    double node_j;
};

/* The fields of the "cpu " line, in the kernel's order; guest and
 * guest_nice, which follow, are already counted in user and nice. */
enum { CPU_USER, CPU_NICE, CPU_SYSTEM, CPU_IDLE, CPU_IOWAIT, N_CPU_FIELDS = 8 };
/* Kernels before 2.6.11 have no steal, before 2.6.0 no iowait, irq or
 * softirq: absent, they are 0. */
#define MIN_CPU_FIELDS 4

/* As procstat's buffer for the same file: a tick's read of it is shared
 * (vigil_provider_file_read_at), so the file is read whole. */
#define STAT_FIRST_BYTES (64u * 1024u)
#define STAT_MAX_BYTES   (64u * 1024u * 1024u)

static gboolean parse_cpu_line(const char *text, struct cpu_ticks *ticks)
{
    if (!VIGIL_PROVIDER_HAS_PREFIX(text, "cpu "))
        return FALSE;
    guint64 fields[N_CPU_FIELDS] = {0};
    const char *p = text + strlen("cpu ");
    int n = 0;
    while (n < N_CPU_FIELDS) {
        while (*p == ' ')
            p++;
        if (!g_ascii_isdigit(*p))
            break;
        /* strtoull cost 180 instructions a number; it stays for one past
         * 64 bits, which it takes as G_MAXUINT64. */
        if (!vigil_provider_scan_u64(&p, &fields[n])) {
            char *end;
            fields[n] = g_ascii_strtoull(p, &end, 10);
            p = end;
        }
        n++;
    }
    if (n < MIN_CPU_FIELDS)
        return FALSE;
    ticks->idle = fields[CPU_IDLE] + fields[CPU_IOWAIT];
    ticks->busy = 0;
    for (int i = 0; i < N_CPU_FIELDS; i++)
        if (i != CPU_IDLE && i != CPU_IOWAIT)
            ticks->busy += fields[i];
    return TRUE;
}

static gboolean check_cpu_ticks(struct estimate *e, int code, struct cpu_ticks *ticks,
                                GError **error)
{
    if (!parse_cpu_line(e->stat.buffer, ticks)) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                    "%s does not start with a \"cpu \" line of at least %d numbers: \"%.60s\"",
                    e->stat.path, MIN_CPU_FIELDS, e->stat.buffer);
        return FALSE;
    }
    return TRUE;
}

static double model_power_w(const struct estimate *e, double utilisation)
{
    return (double)e->sockets * (e->idle_w + (e->max_w - e->idle_w) * utilisation);
}

/* With no tick between two reads (two reads in one jiffy) the node is
 * taken to be doing what it did before. Ticks going backwards (CPUs taken
 * offline drop out of the sums) give no utilisation either: the previous
 * one is used, and the sample is marked. */
static double interval_utilisation(struct estimate *e, const struct cpu_ticks *now, uint32_t *flags)
{
    if (now->idle < e->prev_ticks.idle || now->busy < e->prev_ticks.busy) {
        *flags |= VIGIL_SAMPLE_UNCERTAIN;
        return e->utilisation;
    }
    guint64 idle = now->idle - e->prev_ticks.idle;
    guint64 total = idle + (now->busy - e->prev_ticks.busy);
    if (total > 0)
        e->utilisation = 1.0 - (double)idle / (double)total;
    return e->utilisation;
}

static gboolean estimate_read(void *state, uint64_t now_ns, const struct vigil_sample_sink *sink,
                              GError **error)
{
    struct estimate *e = state;
    struct cpu_ticks ticks;
    if (!vigil_provider_file_read_at(&e->stat, now_ns, error) ||
        !check_cpu_ticks(e, VIGIL_PROVIDER_ERROR_READ, &ticks, error))
        return FALSE;
    uint32_t flags = 0;
    if (e->stat_primed) {
        double utilisation = interval_utilisation(e, &ticks, &flags);
        double interval_s =
            now_ns > e->prev_ns ? (double)(now_ns - e->prev_ns) / ENERGY_NS_PER_S : 0;
        e->node_j += model_power_w(e, utilisation) * interval_s;
    }
    e->stat_primed = TRUE;
    e->prev_ticks = ticks;
    if (now_ns > e->prev_ns)
        e->prev_ns = now_ns;
    vigil_sample_emit(sink, e->node_metric_id, e->node_j, flags);
    return TRUE;
}

static void estimate_stop(void *state)
{
    struct estimate *e = state;
    vigil_provider_file_clear(&e->stat);
    g_free(e);
}

static void *estimate_start(const struct energy_settings *settings, vigil_metric_catalog *catalog,
                            GError **error)
{
    struct estimate *e = g_new0(struct estimate, 1);
    e->idle_w = settings->idle_w;
    e->max_w = settings->max_w;
    e->sockets = settings->sockets;
    vigil_provider_file_init(&e->stat, settings->root, "proc/stat", STAT_FIRST_BYTES,
                             STAT_MAX_BYTES);
    struct cpu_ticks ticks;
    if (vigil_provider_file_open(&e->stat, error) &&
        check_cpu_ticks(e, VIGIL_PROVIDER_ERROR_UNAVAILABLE, &ticks, error)) {
        e->node_metric_id =
            vigil_metric_register(catalog, "energy.node_j", "J", VIGIL_METRIC_COUNTER,
                                  energy_source_estimate.origin, VIGIL_METRIC_ESTIMATED, error);
        if (e->node_metric_id != 0) {
            g_message("energy is estimated from %s (%" G_GINT64_FORMAT
                      " socket(s), %g W idle to %g W busy each), not measured",
                      e->stat.path, e->sockets, e->idle_w, e->max_w);
            return e;
        }
    }
    estimate_stop(e);
    return NULL;
}

const struct energy_source energy_source_estimate = ENERGY_SOURCE(
    "estimate", .start = estimate_start, .read = estimate_read, .stop = estimate_stop);
