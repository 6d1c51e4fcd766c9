/* vigil — helpers every statistics provider uses. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "vigil/plugin.h"
#include "vigil/provider.h"

GQuark vigil_provider_error_quark(void)
{
    return g_quark_from_static_string("vigil-provider-error-quark");
}

gssize vigil_provider_pread_all(int fd, char *buffer, gsize size)
{
    gsize done = 0;
    while (done + 1 < size) {
        gsize asked = size - 1 - done;
        ssize_t n = pread(fd, buffer + done, asked, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        done += (gsize)n;
        /* A /proc or /sys file gives everything it has in one read when
         * there is room for it, so a short read is its end. Reading on to
         * see 0 would make the kernel generate the whole file once more,
         * which doubled the cost of every tick. */
        if ((gsize)n < asked)
            break;
    }
    buffer[done] = '\0';
    return (gssize)done;
}

char *vigil_provider_path(const char *root, const char *relative)
{
    return g_build_filename(root != NULL && root[0] != '\0' ? root : "/", relative, NULL);
}

/* Files read every tick ---------------------------------------------------------------------- */

void vigil_provider_file_init(struct vigil_provider_file *file, const char *root,
                              const char *relative, gsize initial_size, gsize max_size)
{
    file->path = vigil_provider_path(root, relative);
    file->fd = -1;
    file->size = initial_size;
    file->max_size = MAX(initial_size, max_size);
    file->buffer = g_malloc(file->size);
    file->buffer[0] = '\0';
}

/* A read that fills the buffer may have cut the file short: the buffer
 * grows and the file is read again, up to max_size, past which the file is
 * not the one the provider knows and growing would only eat the node's
 * memory. */
static gboolean load(struct vigil_provider_file *file, enum vigil_provider_error_code code,
                     GError **error)
{
    for (;;) {
        gssize n = vigil_provider_pread_all(file->fd, file->buffer, file->size);
        if (n < 0) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, code, "cannot read %s: %s", file->path,
                        g_strerror(errno));
            return FALSE;
        }
        if ((gsize)n + 1 < file->size) {
            file->length = (gsize)n;
            return TRUE;
        }
        if (file->size >= file->max_size) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                        "%s is larger than %" G_GSIZE_FORMAT " bytes", file->path,
                        file->max_size - 1);
            return FALSE;
        }
        file->size = MIN(file->size * 2, file->max_size);
        file->buffer = g_realloc(file->buffer, file->size);
    }
}

gboolean vigil_provider_file_open(struct vigil_provider_file *file, GError **error)
{
    if (file->fd >= 0)
        close(file->fd);
    file->fd = open(file->path, O_RDONLY | O_CLOEXEC);
    if (file->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "cannot open %s: %s", file->path, g_strerror(errno));
        return FALSE;
    }
    return load(file, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
}

gboolean vigil_provider_file_read(struct vigil_provider_file *file, GError **error)
{
    if (file->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s: read before a successful start", file->path);
        return FALSE;
    }
    return load(file, VIGIL_PROVIDER_ERROR_READ, error);
}

/* The last text read of each path at a tick, for the providers that read
 * the same file in the same tick. A handful of paths, kept for the
 * process's life. */
struct tick_text {
    const struct vigil_provider_file *reader; /* whose pread it is */
    uint64_t tick_ns;
    char *text;
    gsize length, size;
};

static GHashTable *tick_texts; /* path → struct tick_text */

static void tick_text_free(gpointer data)
{
    struct tick_text *t = data;
    g_free(t->text);
    g_free(t);
}

gboolean vigil_provider_file_read_at(struct vigil_provider_file *file, uint64_t tick_ns,
                                     GError **error)
{
    if (tick_texts == NULL)
        tick_texts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, tick_text_free);
    struct tick_text *t = g_hash_table_lookup(tick_texts, file->path);
    /* The reader itself reading again wants the file as it is now. */
    if (t != NULL && t->tick_ns == tick_ns && t->reader != file && file->fd >= 0 &&
        t->length < file->max_size) {
        if (t->length + 1 > file->size) {
            file->size = MIN(MAX(file->size * 2, t->length + 1), file->max_size);
            file->buffer = g_realloc(file->buffer, file->size);
        }
        memcpy(file->buffer, t->text, t->length + 1);
        file->length = t->length;
        return TRUE;
    }
    if (!vigil_provider_file_read(file, error))
        return FALSE;
    if (t == NULL) {
        t = g_new0(struct tick_text, 1);
        g_hash_table_insert(tick_texts, g_strdup(file->path), t);
    }
    if (file->length + 1 > t->size) {
        t->size = file->length + 1;
        t->text = g_realloc(t->text, t->size);
    }
    memcpy(t->text, file->buffer, file->length + 1);
    t->length = file->length;
    t->tick_ns = tick_ns;
    t->reader = file;
    return TRUE;
}

void vigil_provider_file_clear(struct vigil_provider_file *file)
{
    /* A file made later at the same address is another reader. */
    struct tick_text *t = tick_texts != NULL && file->path != NULL
                              ? g_hash_table_lookup(tick_texts, file->path)
                              : NULL;
    if (t != NULL && t->reader == file)
        g_hash_table_remove(tick_texts, file->path);
    if (file->fd >= 0)
        close(file->fd);
    g_free(file->buffer);
    g_free(file->path);
    memset(file, 0, sizeof *file);
    file->fd = -1;
}

/* Parsing ------------------------------------------------------------------------------------ */

/* The external definitions of the helpers vigil/provider.h defines inline. */
extern inline gboolean vigil_provider_is_blank(char c);
extern inline const char *vigil_provider_skip_blanks(const char *p);
extern inline gboolean vigil_provider_has_prefix(const char *text, const char *prefix,
                                                 size_t length);
extern inline char *vigil_provider_next_line(char **cursor);
extern inline char *vigil_provider_next_field(char **cursor);
extern inline gboolean vigil_provider_scan_u64(const char **cursor, guint64 *value);
extern inline gboolean vigil_provider_parse_u64(const char *text, guint64 *value);

/* 10^0 to 10^22: every one is exactly a double. */
static const double exact_powers_of_ten[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The digits and at most one point in [start, end) as one correctly rounded
 * division of two exact doubles, which is what strtod gives for them; FALSE
 * when the digits do not fit in 53 bits or there are more than 22 after the
 * point. strtod's general path cost about 700 instructions a number, most of
 * loadavg's read (/proc/loadavg's three loads every tick). */
static gboolean exact_decimal(const char *start, const char *end, double *value)
{
    guint64 digits = 0;
    guint after_point = 0;
    gboolean point = FALSE;
    for (const char *c = start; c < end; c++) {
        if (*c == '.') {
            if (point)
                return FALSE;
            point = TRUE;
            continue;
        }
        if (digits >= ((guint64)1 << 53) / 10)
            return FALSE;
        digits = digits * 10 + (guint)(*c - '0');
        after_point += point;
    }
    if (after_point >= G_N_ELEMENTS(exact_powers_of_ten))
        return FALSE;
    *value = (double)digits / exact_powers_of_ten[after_point];
    return TRUE;
}

gboolean vigil_provider_scan_double(const char **cursor, double *value)
{
    const char *p = *cursor;
    gboolean digits = FALSE;
    for (; g_ascii_isdigit(*p) || *p == '.'; p++)
        digits = digits || g_ascii_isdigit(*p);
    if (!digits)
        return FALSE;
    /* A letter after the number ("1e5", "0x1") may be part of it for
     * strtod, which then refuses it below. */
    double v;
    if (!g_ascii_isalpha(*p) && exact_decimal(*cursor, p, &v)) {
        *cursor = p;
        *value = v;
        return TRUE;
    }
    /* Only digits and points were let through: strtod checks that there is
     * one point at most ("1.2.3" stops it short). */
    char *end = NULL;
    v = g_ascii_strtod(*cursor, &end);
    if (end != p || !isfinite(v))
        return FALSE;
    *cursor = p;
    *value = v;
    return TRUE;
}

void vigil_provider_line_error(GError **error, const char *path, guint line, const char *format,
                               ...)
{
    va_list args;
    va_start(args, format);
    char *reason = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ, "%s, line %u: %s", path,
                line, reason);
    g_free(reason);
}

void vigil_provider_sanitize_name_part(char *part, const char *kept)
{
    for (char *c = part; *c != '\0'; c++) {
        if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_' && strchr(kept, *c) == NULL)
            *c = '_';
    }
}

/* Devices ------------------------------------------------------------------------------------ */

struct vigil_provider_device {
    gboolean left_out; /* its metric names are another device's */
    guint64 last_scan; /* numbered, so that no mark needs clearing before a scan */
    uint32_t ids[];
};

void vigil_provider_devices_init(struct vigil_provider_devices *devices,
                                 const struct vigil_provider_device_kind *kind, const char *path)
{
    devices->kind = kind;
    devices->path = path;
    devices->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    devices->metric_owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    devices->scan = 0;
}

void vigil_provider_devices_clear(struct vigil_provider_devices *devices)
{
    g_clear_pointer(&devices->metric_owners, g_hash_table_destroy);
    g_clear_pointer(&devices->by_name, g_hash_table_destroy);
}

void vigil_provider_devices_begin_scan(struct vigil_provider_devices *devices)
{
    devices->scan++;
}

/* One pass over the line's numbers, read where they stand: splitting each
 * field off and parsing it again took two passes over every character of
 * /proc/diskstats and /proc/net/dev each tick. */
gboolean vigil_provider_devices_parse_stats(const struct vigil_provider_devices *devices,
                                            char **cursor, guint line, guint64 *stats,
                                            gboolean *all_zero, GError **error)
{
    const struct vigil_provider_device_kind *kind = devices->kind;
    guint count = 0;
    gboolean zero = TRUE;
    const char *p = *cursor;
    for (;; count++) {
        p = vigil_provider_skip_blanks(p);
        if (*p == '\0')
            break;
        const char *field = p;
        guint64 value = 0;
        if (!vigil_provider_scan_u64(&p, &value) || (*p != '\0' && !vigil_provider_is_blank(*p))) {
            size_t length = 0;
            while (field[length] != '\0' && !vigil_provider_is_blank(field[length]))
                length++;
            vigil_provider_line_error(error, devices->path, line,
                                      "%s %u is \"%.*s\", not a whole number", kind->stat_noun,
                                      count + 1, (int)length, field);
            return FALSE;
        }
        zero = zero && value == 0;
        if (count < kind->n_stats)
            stats[count] = value;
    }
    *cursor = (char *)p;
    if (count < kind->n_stats) {
        vigil_provider_line_error(error, devices->path, line,
                                  "%u %ss after the %s name, expected at least %u", count,
                                  kind->stat_noun, kind->noun, kind->n_stats);
        return FALSE;
    }
    if (all_zero != NULL)
        *all_zero = zero;
    return TRUE;
}

static gboolean register_metrics(const struct vigil_provider_devices *devices,
                                 vigil_metric_catalog *catalog, const char *part,
                                 struct vigil_provider_device *device, GError **error)
{
    const struct vigil_provider_device_kind *kind = devices->kind;
    for (guint m = 0; m < kind->n_metrics; m++) {
        char *name = g_strdup_printf("%s.%s.%s", kind->group, part, kind->metrics[m].suffix);
        device->ids[m] =
            vigil_metric_register(catalog, name, kind->metrics[m].unit, VIGIL_METRIC_COUNTER,
                                  kind->source, VIGIL_METRIC_MEASURED, error);
        g_free(name);
        if (device->ids[m] == 0) {
            g_prefix_error(error, "%s: ", devices->path);
            return FALSE;
        }
    }
    return TRUE;
}

static struct vigil_provider_device *add_device(struct vigil_provider_devices *devices,
                                                vigil_metric_catalog *catalog, const char *name,
                                                GError **error)
{
    const struct vigil_provider_device_kind *kind = devices->kind;
    struct vigil_provider_device *device =
        g_malloc0(sizeof *device + kind->n_metrics * sizeof device->ids[0]);
    char *part = g_strdup(name);
    vigil_provider_sanitize_name_part(part, "-");
    const char *owner = g_hash_table_lookup(devices->metric_owners, part);
    if (owner != NULL) {
        g_log(kind->log_domain, G_LOG_LEVEL_WARNING,
              "%s: %ss %s and %s both map to metrics %s.%s.*: %s is not reported", devices->path,
              kind->noun, owner, name, kind->group, part, name);
        device->left_out = TRUE;
        g_free(part);
    } else if (!register_metrics(devices, catalog, part, device, error)) {
        g_free(part);
        g_free(device);
        return NULL;
    } else {
        g_hash_table_insert(devices->metric_owners, part, g_strdup(name));
    }
    g_hash_table_insert(devices->by_name, g_strdup(name), device);
    return device;
}

gboolean vigil_provider_devices_see(struct vigil_provider_devices *devices,
                                    vigil_metric_catalog *catalog, guint line, const char *name,
                                    gboolean wanted, const uint32_t **ids, GError **error)
{
    *ids = NULL;
    struct vigil_provider_device *device = g_hash_table_lookup(devices->by_name, name);
    if (device == NULL) {
        if (!wanted)
            return TRUE;
        device = add_device(devices, catalog, name, error);
        if (device == NULL)
            return FALSE;
    }
    if (device->last_scan == devices->scan) {
        vigil_provider_line_error(error, devices->path, line, "%s %s appears twice",
                                  devices->kind->noun, name);
        return FALSE;
    }
    device->last_scan = devices->scan;
    if (!device->left_out)
        *ids = device->ids;
    return TRUE;
}

static const struct vigil_config_key root_keys[] = {
    VIGIL_PROVIDER_PROC_ROOT_KEY(struct vigil_provider_root),
};
const struct vigil_settings_table vigil_provider_root_settings =
    VIGIL_SETTINGS_TABLE(NULL, struct vigil_provider_root, root_keys, NULL);

char *vigil_provider_root(const struct vigil_plugin_context *context, GError **error)
{
    struct vigil_provider_root settings;
    if (!vigil_plugin_settings_load(context, &vigil_provider_root_settings, &settings, error))
        return NULL;
    return settings.root;
}
