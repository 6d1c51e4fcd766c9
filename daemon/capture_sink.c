/* vigild — the capture sink: forwarded windows as JSON lines in a file, on
 * a node without a transaction server. One object per line, written whole,
 * so that a reader never sees half a line once a cycle is flushed.
 *
 * Bounded: a line that would take the file past max_bytes starts a new
 * file, the full one renamed SINK.1 (SINK.1 to SINK.2, ...), and the file
 * past keep_files is deleted. Every deletion is data thrown away, so it is
 * logged and counted, never silent. The files are the owner's alone (0600)
 * since they hold every process's file paths. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "capture_sink.h"

/* Warnings about the same kind of loss: the first few, then one in so many. */
#define LOG_FIRST 10
#define LOG_EVERY 100

struct vigild_capture_sink {
    char *path;
    FILE *file;
    JsonGenerator *generator;
    uint64_t max_bytes;
    guint keep_files;
    uint64_t file_bytes; /* in the current file, buffered ones too */
    struct vigild_capture_sink_stats stats;
};

static gboolean log_this(uint64_t count)
{
    return count <= LOG_FIRST || count % LOG_EVERY == 0;
}

static void count_error(struct vigild_capture_sink *sink, int e)
{
    if (sink->stats.errors++ == 0)
        g_warning("capture sink %s: %s; windows are counted but not all are written", sink->path,
                  g_strerror(e));
}

/* The file at `path`, created private; an older regular file others could
 * read is made private too (a device such as /dev/null is left alone). */
static FILE *open_private(const char *path, uint64_t *size, GError **error)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 ||
        (S_ISREG(st.st_mode) && (st.st_mode & 077) != 0 && fchmod(fd, 0600) != 0)) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[capture] sink: cannot open %s privately (mode 0600): %s", path,
                    g_strerror(e));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    FILE *file = fdopen(fd, "a");
    if (file == NULL) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[capture] sink: cannot open %s: %s", path, g_strerror(e));
        close(fd);
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    return file;
}

struct vigild_capture_sink *vigild_capture_sink_open(const char *path, uint64_t max_bytes,
                                                     guint keep_files, GError **error)
{
    char *folder = g_path_get_dirname(path);
    if (g_mkdir_with_parents(folder, 0700) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[capture] sink: cannot make the folder %s: %s", folder, g_strerror(e));
        g_free(folder);
        return NULL;
    }
    g_free(folder);
    uint64_t size = 0;
    FILE *file = open_private(path, &size, error);
    if (file == NULL)
        return NULL;
    struct vigild_capture_sink *sink = g_new0(struct vigild_capture_sink, 1);
    sink->path = g_strdup(path);
    sink->file = file;
    sink->generator = json_generator_new();
    sink->file_bytes = size;
    vigild_capture_sink_set_bounds(sink, max_bytes, keep_files);
    return sink;
}

void vigild_capture_sink_set_bounds(struct vigild_capture_sink *sink, uint64_t max_bytes,
                                    guint keep_files)
{
    sink->max_bytes = max_bytes;
    sink->keep_files = keep_files;
}

const char *vigild_capture_sink_path(const struct vigild_capture_sink *sink)
{
    return sink->path;
}

static char *rotated_name(const char *path, guint n)
{
    return g_strdup_printf("%s.%u", path, n);
}

/* Deletes a full file to keep the bound: data lost, so said. */
static void drop_file(struct vigild_capture_sink *sink, const char *name)
{
    struct stat st;
    if (lstat(name, &st) != 0)
        return;
    if (g_unlink(name) != 0) {
        count_error(sink, errno);
        return;
    }
    sink->stats.files_dropped++;
    sink->stats.bytes_dropped += (uint64_t)st.st_size;
    if (log_this(sink->stats.files_dropped))
        g_warning("capture sink: deleted %s (%lld bytes of windows) to stay within "
                  "[capture] sink_keep_files = %u files of sink_max_bytes = %" G_GUINT64_FORMAT
                  "; %" G_GUINT64_FORMAT " files (%" G_GUINT64_FORMAT " bytes) deleted so far",
                  name, (long long)st.st_size, sink->keep_files, sink->max_bytes,
                  sink->stats.files_dropped, sink->stats.bytes_dropped);
}

void vigild_capture_sink_rotate(struct vigild_capture_sink *sink)
{
    if (fclose(sink->file) != 0)
        count_error(sink, errno);
    sink->file = NULL;
    if (sink->keep_files == 0) {
        drop_file(sink, sink->path);
    } else {
        char *oldest = rotated_name(sink->path, sink->keep_files);
        drop_file(sink, oldest);
        g_free(oldest);
        for (guint n = sink->keep_files; n > 1; n--) {
            char *from = rotated_name(sink->path, n - 1), *to = rotated_name(sink->path, n);
            if (g_rename(from, to) != 0 && errno != ENOENT)
                count_error(sink, errno);
            g_free(from);
            g_free(to);
        }
        char *newest = rotated_name(sink->path, 1);
        if (g_rename(sink->path, newest) != 0 && errno != ENOENT)
            count_error(sink, errno);
        g_free(newest);
    }
    sink->stats.rotations++;
    GError *error = NULL;
    uint64_t size = 0;
    sink->file = open_private(sink->path, &size, &error);
    if (sink->file == NULL) {
        /* Nowhere to write: /dev/null keeps the writes simple, each counted. */
        if (sink->stats.errors++ == 0)
            g_warning("capture sink: %s; windows are counted but not written", error->message);
        g_error_free(error);
        sink->file = fopen("/dev/null", "ae");
    }
    sink->file_bytes = size;
}

static gboolean put_text(struct vigild_capture_sink *sink, const char *text, gsize length,
                         gboolean may_rotate)
{
    uint64_t need = (uint64_t)length + 1;
    gboolean written = TRUE;
    if (need > sink->max_bytes) {
        /* It would not fit even an empty file. */
        sink->stats.lines_dropped++;
        sink->stats.bytes_dropped += need;
        if (log_this(sink->stats.lines_dropped))
            g_warning("capture sink: a line of %" G_GUINT64_FORMAT
                      " bytes is longer than [capture] sink_max_bytes = %" G_GUINT64_FORMAT
                      " and is not written; %" G_GUINT64_FORMAT " lines dropped so far",
                      need, sink->max_bytes, sink->stats.lines_dropped);
    } else if (sink->file_bytes > 0 && sink->file_bytes + need > sink->max_bytes) {
        vigild_capture_sink_rotate(sink);
        written = may_rotate ? put_text(sink, text, length, FALSE) : FALSE;
    } else if (fwrite(text, 1, length, sink->file) != length || fputc('\n', sink->file) == EOF) {
        count_error(sink, errno);
    } else {
        sink->file_bytes += need;
        sink->stats.lines++;
        sink->stats.bytes += need;
    }
    return written;
}

static gboolean put_line(struct vigild_capture_sink *sink, JsonBuilder *builder,
                         gboolean may_rotate)
{
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(sink->generator, root);
    gsize length;
    char *text = json_generator_to_data(sink->generator, &length);
    json_node_unref(root);
    gboolean written = put_text(sink, text, length, may_rotate);
    g_free(text);
    return written;
}

void vigild_capture_sink_write_text(struct vigild_capture_sink *sink, const char *text,
                                    gsize length)
{
    put_text(sink, text, length, TRUE);
}

void vigild_capture_sink_write(struct vigild_capture_sink *sink, JsonBuilder *builder)
{
    put_line(sink, builder, TRUE);
}

gboolean vigild_capture_sink_write_or_rotate(struct vigild_capture_sink *sink, JsonBuilder *builder)
{
    return put_line(sink, builder, FALSE);
}

void vigild_capture_sink_flush(struct vigild_capture_sink *sink)
{
    if (fflush(sink->file) != 0)
        count_error(sink, errno);
}

uint64_t vigild_capture_sink_errors(const struct vigild_capture_sink *sink)
{
    return sink->stats.errors;
}

void vigild_capture_sink_stats(const struct vigild_capture_sink *sink,
                               struct vigild_capture_sink_stats *out)
{
    *out = sink->stats;
    out->file_bytes = sink->file_bytes;
}

void vigild_capture_sink_close(struct vigild_capture_sink *sink)
{
    if (sink == NULL)
        return;
    if (fclose(sink->file) != 0)
        count_error(sink, errno);
    g_object_unref(sink->generator);
    g_free(sink->path);
    g_free(sink);
}
