/* vigil-web — who is asking, and whose runs they may see.
 *
 * auth = none: everybody is an admin (vigil-web then listens on loopback
 * only, unless the config says otherwise). auth = remote-user: the site's
 * reverse proxy logs users in and names them in a header; the header is
 * believed only from the proxies listed, the user must have an account on
 * this machine (their uid is what runs.uid holds), and admins are listed
 * by name. */
#ifndef VIGIL_WEB_AUTH_H
#define VIGIL_WEB_AUTH_H

#include <gio/gio.h>

#include "request.h"
#include "web_settings.h"

/* Fills `out` (free it with web_viewer_clear) or fails with a 403 saying
 * why. `header` is the user header's value, or NULL. */
gboolean web_viewer_identify(const struct web_settings *s, GInetAddress *remote, const char *header,
                             struct web_viewer *out, GError **error);
void web_viewer_clear(struct web_viewer *v);

/* The name of `uid` on this machine (cached), or NULL. Thread-safe. */
const char *web_user_name(gint64 uid);
/* The uid of a user name, or -1. Thread-safe. */
gint64 web_user_uid(const char *name);

#endif
