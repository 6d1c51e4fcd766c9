/* vigil-web — arrays of numbers written straight into an answer's text.
 *
 * A narrow exception to json-glib: a long run's series answer is 57,600
 * doubles or more, and json-glib made a node of each and printed it with
 * printf's "%.17g" (callgrind on bench/web: 72 % of vigil-web's
 * instructions for the series, 66 % in g_ascii_dtostr alone). Here the
 * same 17 significant digits are made with integer arithmetic, and the
 * text is byte for byte json-glib's (tests/unit/test_web_numbers.c holds
 * them to it), so an answer is the same whichever writes it. Everything
 * else of an answer is still json-glib's. */
#ifndef VIGIL_WEB_JSON_NUMBERS_H
#define VIGIL_WEB_JSON_NUMBERS_H

#include <glib.h>

/* `v` as json-glib writes a double ("%.17g", ".0" added when there is no
 * point); NAN or an infinity as null. */
void web_json_append_double(GString *out, double v);
/* [v0,v1,…], each as above. */
void web_json_append_numbers(GString *out, const double *v, guint n);
/* `text` as a JSON string, quoted and escaped (by json-glib). */
void web_json_append_string(GString *out, const char *text);

#endif
