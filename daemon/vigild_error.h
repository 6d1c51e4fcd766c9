/* vigild — errors of the daemon's own making (a client refused: local_server.c,
 * processes.c). */
#ifndef VIGILD_ERROR_H
#define VIGILD_ERROR_H

#include <glib.h>

/* Errors of the daemon's own making; the message says what is wrong. */
#define VIGILD_ERROR (g_quark_from_static_string("vigild-error"))
enum vigild_error_code {
    VIGILD_ERROR_REFUSED, /* a client's registration or message */
};

#endif
