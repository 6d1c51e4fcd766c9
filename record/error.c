/* vigil — error text for the GLib-free core. */
#include <stdarg.h>
#include <stdio.h>

#include "vigil/error.h"

void vigil_error_set(struct vigil_error *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}
