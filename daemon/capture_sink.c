/* vigild — the capture sink: forwarded windows as JSON lines in a file,
 * until the transaction server takes them. One object per line, written
 * whole, so that a reader never sees half a line once a cycle is flushed. */
#include <errno.h>
#include <stdio.h>

#include "vigild.h"

struct vigild_capture_sink {
    char *path;
    FILE *file;
    JsonGenerator *generator;
    uint64_t errors;
};

struct vigild_capture_sink *vigild_capture_sink_open(const char *path, GError **error)
{
    char *folder = g_path_get_dirname(path);
    if (g_mkdir_with_parents(folder, 0755) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[capture] sink: cannot make the folder %s: %s", folder, g_strerror(e));
        g_free(folder);
        return NULL;
    }
    g_free(folder);
    FILE *file = fopen(path, "ae");
    if (file == NULL) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[capture] sink: cannot open %s: %s", path, g_strerror(e));
        return NULL;
    }
    struct vigild_capture_sink *sink = g_new0(struct vigild_capture_sink, 1);
    sink->path = g_strdup(path);
    sink->file = file;
    sink->generator = json_generator_new();
    return sink;
}

const char *vigild_capture_sink_path(const struct vigild_capture_sink *sink)
{
    return sink->path;
}

static void count_error(struct vigild_capture_sink *sink, int e)
{
    if (sink->errors++ == 0)
        g_warning("capture sink %s: %s; windows are counted but not all are written", sink->path,
                  g_strerror(e));
}

void vigild_capture_sink_write(struct vigild_capture_sink *sink, JsonBuilder *builder)
{
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(sink->generator, root);
    gsize length;
    char *text = json_generator_to_data(sink->generator, &length);
    json_node_unref(root);
    if (fwrite(text, 1, length, sink->file) != length || fputc('\n', sink->file) == EOF)
        count_error(sink, errno);
    g_free(text);
}

void vigild_capture_sink_flush(struct vigild_capture_sink *sink)
{
    if (fflush(sink->file) != 0)
        count_error(sink, errno);
}

uint64_t vigild_capture_sink_errors(const struct vigild_capture_sink *sink)
{
    return sink->errors;
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
