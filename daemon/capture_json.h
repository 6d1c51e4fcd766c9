/* vigild — the JSON sink as a capture consumer: what each line of the sink
 * says (capture_json.c); the file itself is capture_sink.c's. */
#ifndef VIGILD_CAPTURE_JSON_H
#define VIGILD_CAPTURE_JSON_H

#include <stdint.h>
#include <glib.h>

#include "capture.h"

struct vigild_capture_sink; /* capture_sink.h */

/* Where windows go: capture's consumer "sink" becomes a JSON-lines file at
 * `path` (NULL: none, windows are counted but written nowhere), or only
 * takes new bounds when it is the same file. FALSE with error when the
 * file cannot be opened: the old sink stays. */
gboolean vigild_capture_open_sink(struct vigild_capture *c, const char *path, uint64_t max_bytes,
                                  guint keep_files, GError **error);
/* The sink of capture, or NULL; and its path. */
struct vigild_capture_sink *vigild_capture_sink(const struct vigild_capture *c);
const char *vigild_capture_path(const struct vigild_capture *c);

#endif
