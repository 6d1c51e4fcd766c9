/* vigil — error text for the GLib-free part of the core.
 *
 * The ring, the clocks and the records are linked into libvigil-preload.so,
 * which runs inside arbitrary programs: it must not pull in GLib or allocate
 * to report a failure. Those parts fill a fixed buffer instead of a GError.
 * Everything else in vigil uses GError. */
#ifndef VIGIL_ERROR_H
#define VIGIL_ERROR_H

struct vigil_error {
    char message[256];
};

/* Formats into err->message (truncating); err may be NULL. */
void vigil_error_set(struct vigil_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
