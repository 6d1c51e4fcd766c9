/* vigild — where forwarded windows go: a JSON-lines file (capture_sink.c). */
#ifndef VIGILD_CAPTURE_SINK_H
#define VIGILD_CAPTURE_SINK_H

#include <stdint.h>
#include <glib.h>

#include <json-glib/json-glib.h>

struct vigild_capture_sink;

/* A JSON-lines file: one object per line, flushed at every cycle's end so
 * that a reader sees whole cycles. docs/architecture.md lists the lines.
 * At most max_bytes a file: a line that would pass it goes to a new file,
 * the full one renamed PATH.1 (PATH.1 to PATH.2, ...), and files past
 * keep_files deleted, logged and counted. Files 0600, a new folder 0700. */
struct vigild_capture_sink_stats {
    uint64_t lines, bytes; /* written */
    uint64_t file_bytes;   /* in the current file */
    uint64_t rotations;
    uint64_t files_dropped; /* full files deleted to keep the bound */
    uint64_t lines_dropped; /* lines longer than max_bytes, never written */
    uint64_t bytes_dropped; /* of both */
    uint64_t errors;        /* failed writes */
};

struct vigild_capture_sink *vigild_capture_sink_open(const char *path, uint64_t max_bytes,
                                                     guint keep_files, GError **error);
void vigild_capture_sink_set_bounds(struct vigild_capture_sink *sink, uint64_t max_bytes,
                                    guint keep_files);
const char *vigild_capture_sink_path(const struct vigild_capture_sink *sink);
/* Writes one line made by the builder, starting a new file first when it
 * would pass max_bytes; a failed write is logged once and counted. */
void vigild_capture_sink_write(struct vigild_capture_sink *sink, JsonBuilder *builder);
/* One line of JSON made by the caller, `length` bytes without the newline,
 * written as vigild_capture_sink_write() writes a builder's: for the line of
 * every cycle, whose fixed members a builder, its tree and a generator
 * would cost the tick ten times the instructions of a printf. */
void vigild_capture_sink_write_text(struct vigild_capture_sink *sink, const char *text,
                                    gsize length);
/* The same as vigild_capture_sink_write, except that when the line needs a
 * new file it starts one and returns FALSE without writing: a line that
 * refers to earlier lines of its file (names sent before) must be built
 * again for the new file. */
gboolean vigild_capture_sink_write_or_rotate(struct vigild_capture_sink *sink,
                                             JsonBuilder *builder);
void vigild_capture_sink_rotate(struct vigild_capture_sink *sink);
void vigild_capture_sink_flush(struct vigild_capture_sink *sink);
uint64_t vigild_capture_sink_errors(const struct vigild_capture_sink *sink);
void vigild_capture_sink_stats(const struct vigild_capture_sink *sink,
                               struct vigild_capture_sink_stats *out);
void vigild_capture_sink_close(struct vigild_capture_sink *sink);

#endif
