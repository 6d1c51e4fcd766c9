/* vigil-web — the pages and uPlot, served from two folders:
 *   /                    → STATIC/index.html
 *   /NAME.html           → STATIC/NAME.html
 *   /static/PATH         → STATIC/PATH
 *   /vendor/uplot/PATH   → VENDOR/PATH  (web/node_modules/uplot/dist)
 * Nothing outside the two folders is ever served: no "..", no hidden
 * files, and a link that leads out of its folder is refused. */
#ifndef VIGIL_WEB_STATIC_FILES_H
#define VIGIL_WEB_STATIC_FILES_H

#include <libsoup/soup.h>

#include "web_settings.h"

/* Answers `msg` (any path that is not the API's). */
void web_static_serve(const struct web_settings *s, SoupServerMessage *msg, const char *path);

#endif
