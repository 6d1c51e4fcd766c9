/* vigil-web — SIGHUP: the configuration read again, checked whole, and its
 * log level applied. The rest ([web]'s address, pool and limits, the
 * thresholds page's sections) is read at the start only: a reload that is
 * not refused says so. Without a handler SIGHUP would end vigil-web, and
 * systemd's `reload` (ExecReload=kill -HUP) would stop the service. */
#ifndef VIGIL_WEB_RELOAD_H
#define VIGIL_WEB_RELOAD_H

#include <glib.h>

/* Installs the SIGHUP handler on the default main context; `config_path`
 * must outlive it. */
void web_reload_on_sighup(const char *config_path);

#endif
