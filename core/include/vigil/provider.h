/* vigil — statistics providers: the plugins that read the node every tick.
 *
 * A provider is a plugin of kind VIGIL_PLUGIN_PROVIDER (plugin.h) whose
 * `ops` point to a struct vigil_provider_ops. vigild creates it from its
 * [provider.NAME] section, starts it once, then calls read() every tick
 * (100 ms by default):
 *
 *   start: registers its metrics in the catalogue (name, unit, counter or
 *          gauge, source, measured or estimated) and opens its files, which
 *          it keeps open and reads with pread. When the provider cannot work
 *          on this machine it fails with a message that says why (no RAPL,
 *          permission denied on energy_uj…): the daemon logs it once and
 *          runs on without it.
 *   read:  reads its files once and hands each value to the sink, with the
 *          metric id it registered. A metric that appears later (a disk
 *          plugged in) is registered when it is first seen.
 *
 * Every provider reads under the directory its `root` key names, "/" on a
 * real node: the tests point it at fixture trees whose files they write. */
#ifndef VIGIL_PROVIDER_H
#define VIGIL_PROVIDER_H

#include <string.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"
#include "vigil/metric.h"

/* Where a provider's values go. */
struct vigil_sample_sink {
    void (*emit)(void *user, uint32_t metric_id, double value, uint32_t flags);
    /* A value about one registered process rather than the node. */
    void (*emit_process)(void *user, uint64_t process_id, uint32_t metric_id, double value,
                         uint32_t flags);
    void *user;
};

static inline void vigil_sample_emit(const struct vigil_sample_sink *sink, uint32_t metric_id,
                                     double value, uint32_t flags)
{
    sink->emit(sink->user, metric_id, value, flags);
}

static inline void vigil_sample_emit_process(const struct vigil_sample_sink *sink,
                                             uint64_t process_id, uint32_t metric_id, double value,
                                             uint32_t flags)
{
    sink->emit_process(sink->user, process_id, metric_id, value, flags);
}

struct vigil_provider_ops {
    gboolean (*start)(void *instance, vigil_metric_catalog *catalog, GError **error);
    /* `now_ns`: CLOCK_MONOTONIC of this tick, for providers that integrate
     * over time (an energy estimate, a wrap check). */
    gboolean (*read)(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                     const struct vigil_sample_sink *sink, GError **error);
    /* Optional, for providers that measure registered processes: vigild
     * calls track() when a process registers and untrack() when it has
     * ended, and read() then emits with emit_process for each one tracked.
     * A process that cannot be tracked (gone already, not readable) fails
     * track() with a message; the daemon logs it and goes on. */
    gboolean (*track)(void *instance, uint64_t process_id, pid_t pid, GError **error);
    void (*untrack)(void *instance, uint64_t process_id);
    /* Optional: one line about how the provider works here, for `vigil
     * status` (which source it reads, why others are not used, what it
     * leaves out), or NULL. Owned by the instance, valid until its next
     * start or its end. */
    const char *(*note)(void *instance);
};

#define VIGIL_PROVIDER_ERROR (vigil_provider_error_quark())
GQuark vigil_provider_error_quark(void);

enum vigil_provider_error_code {
    VIGIL_PROVIDER_ERROR_UNAVAILABLE, /* not on this machine: the message says why */
    VIGIL_PROVIDER_ERROR_READ,        /* a read or a parse failed */
};

/* Reads a whole small file (a /proc or /sys file) from an open descriptor
 * with pread at offset 0 into `buffer` (NUL-terminated); returns its length,
 * or -1 with errno set. Files that grow past `size` - 1 are cut short. */
gssize vigil_provider_pread_all(int fd, char *buffer, gsize size);

/* The path of `relative` under a provider's root ("/" + "proc/stat"). */
char *vigil_provider_path(const char *root, const char *relative);

/* The `root` key of a provider that reads under proc/, filling the `root`
 * field (char *) of its settings struct `settings_type`. */
#define VIGIL_PROVIDER_PROC_ROOT_KEY(settings_type)                                                \
    {                                                                                              \
        VIGIL_SETTING(settings_type, root),                                                        \
            .type = VIGIL_CONFIG_STRING, .default_value = "/",                                     \
            .description = "directory under which proc/ is read; / on a real node"                 \
    }

/* The settings of a provider whose only key is that `root`: its descriptor
 * points at vigil_provider_root_settings, and create() takes the root with
 * vigil_provider_root (g_free it; NULL with error set on failure). */
struct vigil_provider_root {
    char *root;
};
extern const struct vigil_settings_table vigil_provider_root_settings;
struct vigil_plugin_context;
char *vigil_provider_root(const struct vigil_plugin_context *context, GError **error);

/* Files read every tick ---------------------------------------------------------------------- */

/* A file opened once, at start, and read whole with pread at every tick, so
 * that a file the provider cannot open fails start() once rather than every
 * tick, and a tick costs no path walk. The buffer is kept from one read to
 * the next, so that a read allocates nothing once it has grown to fit; it
 * grows rather than cutting the file short, since a cut would lose the end
 * of a list (CPUs, devices) without anyone noticing. */
struct vigil_provider_file {
    char *path;
    int fd;         /* -1 until opened */
    char *buffer;   /* the last read, NUL-terminated */
    gsize size;     /* of `buffer` */
    gsize max_size; /* a file that does not fit in this is refused */
    gsize length;   /* of the last read's text */
};

/* ROOT/RELATIVE, not opened yet. `max_size` at `initial_size` makes a
 * buffer that never grows, for a file of known size (/proc/loadavg). */
void vigil_provider_file_init(struct vigil_provider_file *file, const char *root,
                              const char *relative, gsize initial_size, gsize max_size);

/* Opens the file, or opens it again, and reads it a first time into
 * `buffer`: a file that opens but cannot be read (a directory) is as
 * unavailable as one that does not exist. VIGIL_PROVIDER_ERROR_UNAVAILABLE
 * says why ("cannot open PATH: REASON"); a file too large for `max_size`
 * is VIGIL_PROVIDER_ERROR_READ. */
gboolean vigil_provider_file_open(struct vigil_provider_file *file, GError **error);

/* Reads the whole file again into `buffer`; VIGIL_PROVIDER_ERROR_READ when
 * it cannot, or when it was never opened. */
gboolean vigil_provider_file_read(struct vigil_provider_file *file, GError **error);

/* The same, for the tick at `tick_ns` (the `now_ns` vigild gives every
 * provider's read in one tick): a file another provider has read at the
 * same tick is copied from that read instead of read again, so that
 * /proc/stat, which procstat and the energy estimate both need, costs the
 * kernel one rendering a tick. The text is the same as a second pread at
 * that instant would give. The provider that made the pread reading again
 * at the same `tick_ns` reads the file again. Providers are read from one
 * thread: this is not for several threads at once. */
gboolean vigil_provider_file_read_at(struct vigil_provider_file *file, uint64_t tick_ns,
                                     GError **error);

/* Closes the file and frees what init() and the reads allocated. */
void vigil_provider_file_clear(struct vigil_provider_file *file);

/* Parsing ------------------------------------------------------------------------------------ */

/* Parsing is strict: the kernel writes its files one way, and anything
 * else (a sign, "0x10", "nan", a number past 64 bits) means the file is not
 * what the parser thinks it is, which a lenient strtoull would hide. Lines
 * and fields are cut in place, so that parsing allocates nothing. */

inline gboolean vigil_provider_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

inline const char *vigil_provider_skip_blanks(const char *p)
{
    while (vigil_provider_is_blank(*p))
        p++;
    return p;
}

/* The helpers below run for every line and number of every file at every
 * tick: they are C99 inline definitions, so that a provider's parse calls
 * no function for each (core/provider.c holds the external definitions).
 * Called through libvigil's PLT they cost procstat, diskstats and netdev
 * 950-1,700 instructions a read each. */

/* Whether `text` starts with the `length` characters of `prefix`, compared
 * one by one: none past the end of a shorter `text` is read. */
inline gboolean vigil_provider_has_prefix(const char *text, const char *prefix, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if (text[i] != prefix[i])
            return FALSE;
    }
    return TRUE;
}

/* The same with a string literal: g_str_has_prefix without its call and
 * two strlen, for tests made on every line of a file. */
#define VIGIL_PROVIDER_HAS_PREFIX(text, literal)                                                   \
    vigil_provider_has_prefix(text, "" literal, sizeof literal - 1)

/* The next line of the text at *cursor, cut at its newline; NULL at the
 * end of the text. An empty line in the middle is a line; the newline that
 * ends the text does not start one. */
inline char *vigil_provider_next_line(char **cursor)
{
    char *line = *cursor;
    if (*line == '\0')
        return NULL;
    char *end = strchr(line, '\n');
    if (end != NULL) {
        *end = '\0';
        *cursor = end + 1;
    } else {
        *cursor = line + strlen(line);
    }
    return line;
}

/* The next blank-separated field of the line at *cursor, cut in place;
 * NULL when only blanks are left. */
inline char *vigil_provider_next_field(char **cursor)
{
    char *p = *cursor;
    while (vigil_provider_is_blank(*p))
        p++;
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *start = p;
    while (*p != '\0' && !vigil_provider_is_blank(*p))
        p++;
    if (*p != '\0')
        *p++ = '\0';
    *cursor = p;
    return start;
}

/* The decimal digits at *cursor, with no blank or sign before them, as a
 * number that fits in 64 bits; moves *cursor past them. What follows them
 * is the caller's to check. */
inline gboolean vigil_provider_scan_u64(const char **cursor, guint64 *value)
{
    const char *p = *cursor;
    /* A digit by one subtraction and comparison, not g_ascii_isdigit's
     * table: these loops are most of netdev's and diskstats' parse. */
    guint digit = (guint)(unsigned char)*p - '0';
    if (digit > 9)
        return FALSE;
    guint64 v = 0;
    do {
        /* One comparison for all but the 20th digit of a huge number. */
        if (v >= G_MAXUINT64 / 10 && (v > G_MAXUINT64 / 10 || digit > G_MAXUINT64 % 10))
            return FALSE;
        v = v * 10 + digit;
        digit = (guint)(unsigned char)*++p - '0';
    } while (digit <= 9);
    *cursor = p;
    *value = v;
    return TRUE;
}

/* All of `text` as such a number. */
inline gboolean vigil_provider_parse_u64(const char *text, guint64 *value)
{
    const char *end = text;
    guint64 v = 0;
    if (!vigil_provider_scan_u64(&end, &v) || *end != '\0')
        return FALSE;
    *value = v;
    return TRUE;
}

/* A decimal with digits and a point ("0.52", "12.25"), finite, at
 * *cursor; moves *cursor past it. */
gboolean vigil_provider_scan_double(const char **cursor, double *value);

/* A VIGIL_PROVIDER_ERROR_READ that says where the file is wrong: "PATH,
 * line N: REASON". */
void vigil_provider_line_error(GError **error, const char *path, guint line, const char *format,
                               ...) G_GNUC_PRINTF(4, 5);

/* Makes `part` fit for one part of a metric name, in place: every character
 * but a lower-case letter, a digit, '_' and those in `kept` becomes '_'
 * (a '.' would start another part). */
void vigil_provider_sanitize_name_part(char *part, const char *kept);

/* Devices ------------------------------------------------------------------------------------ */

/* Files with one line per device (/proc/diskstats, /proc/net/dev): each
 * device's name, then its counters, which become measured counters
 * GROUP.NAME.SUFFIX, NAME made a metric name's part ('.' and upper case
 * become '_', '-' stays). A device is registered when a line first names
 * it, at start() or at a later read. */

struct vigil_provider_device_metric {
    const char *suffix;
    const char *unit;
};

struct vigil_provider_device_kind {
    const char *noun;      /* "device", "interface" */
    const char *stat_noun; /* a number after the name: "statistic", "counter" */
    guint n_stats;         /* the numbers a line must have after the name; it may have more */
    const char *group;     /* the metric names' first part: "disk", "net" */
    const char *source;
    const char *log_domain; /* the provider's G_LOG_DOMAIN, for its warnings */
    const struct vigil_provider_device_metric *metrics;
    guint n_metrics;
};

struct vigil_provider_devices {
    const struct vigil_provider_device_kind *kind;
    const char *path;          /* the file, for messages */
    GHashTable *by_name;       /* the kernel's name → struct vigil_provider_device */
    GHashTable *metric_owners; /* name part → the kernel's name that has its metrics */
    guint64 scan;
};

/* `path` must outlive `devices`. */
void vigil_provider_devices_init(struct vigil_provider_devices *devices,
                                 const struct vigil_provider_device_kind *kind, const char *path);
void vigil_provider_devices_clear(struct vigil_provider_devices *devices);

/* Starts a pass over the file. Passes are numbered so that a name seen
 * twice in one pass is caught without clearing a mark on every device. */
void vigil_provider_devices_begin_scan(struct vigil_provider_devices *devices);

/* Reads every number after a device's name on `line`, so that a line with a
 * stray word is refused rather than half-read: the first kind->n_stats
 * into `stats`, those after them (fields a newer kernel adds) only checked.
 * `all_zero` (or NULL): whether each one was 0. */
gboolean vigil_provider_devices_parse_stats(const struct vigil_provider_devices *devices,
                                            char **cursor, guint line, guint64 *stats,
                                            gboolean *all_zero, GError **error);

/* The device `name` on `line` of this pass: *ids is where its values go
 * (kind->n_metrics of them), or NULL when it is not reported. `wanted`
 * counts only for a name not registered yet: a device once reported stays
 * reported (its counters going back to 0 is news a consumer must see), one
 * not wanted yet may be later. When its metric names are another device's
 * already it is left out, with a warning, so that no metric gets two values
 * in one read. FALSE with `error` set when registering fails, or when the
 * name was on an earlier line of this pass. */
gboolean vigil_provider_devices_see(struct vigil_provider_devices *devices,
                                    vigil_metric_catalog *catalog, guint line, const char *name,
                                    gboolean wanted, const uint32_t **ids, GError **error);

#endif
