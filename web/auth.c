/* vigil-web — who is asking. */
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"

/* What a proxy may name: POSIX portable user names, and '@' and '.' for
 * the realm-qualified names some single-sign-on proxies send. */
static gboolean user_name_is_plausible(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || name[0] == '-')
        return FALSE;
    for (const char *p = name; *p != '\0'; p++)
        if (!g_ascii_isalnum(*p) && strchr("._-@$", *p) == NULL)
            return FALSE;
    return TRUE;
}

gint64 web_user_uid(const char *name)
{
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwnam_r(name, &pw, buf, sizeof buf, &found) != 0 || found == NULL)
        return -1;
    return (gint64)found->pw_uid;
}

static GMutex names_lock;
static GHashTable *names; /* uid (gint64 *) → name or "" for none */

const char *web_user_name(gint64 uid)
{
    g_mutex_lock(&names_lock);
    if (names == NULL)
        names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    const char *name = g_hash_table_lookup(names, &uid);
    if (name == NULL) {
        struct passwd pw, *found = NULL;
        char buf[4096];
        gboolean known = uid >= 0 && uid <= G_MAXUINT32 &&
                         getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &found) == 0 && found != NULL;
        gint64 *key = g_new(gint64, 1);
        *key = uid;
        name = g_strdup(known ? found->pw_name : "");
        /* The table owns both; the name lives as long as the process. */
        g_hash_table_insert(names, key, (gpointer)name);
    }
    g_mutex_unlock(&names_lock);
    return name[0] != '\0' ? name : NULL;
}

gboolean web_viewer_identify(const struct web_settings *s, GInetAddress *remote, const char *header,
                             struct web_viewer *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->uid = -1;
    if (s->auth == WEB_AUTH_NONE) {
        out->admin = TRUE;
        return TRUE;
    }
    if (remote == NULL || !web_settings_trusts(s, remote)) {
        char *from = remote != NULL ? g_inet_address_to_string(remote) : g_strdup("?");
        g_set_error(error, WEB_ERROR, WEB_ERROR_FORBIDDEN,
                    "requests must come through the site's reverse proxy ([web] "
                    "trusted_proxies); this one came from %s",
                    from);
        g_free(from);
        return FALSE;
    }
    if (header == NULL || header[0] == '\0') {
        g_set_error(error, WEB_ERROR, WEB_ERROR_FORBIDDEN,
                    "the reverse proxy named no user (header %s is missing)", s->user_header);
        return FALSE;
    }
    if (!user_name_is_plausible(header)) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_FORBIDDEN, "header %s does not hold a user name",
                    s->user_header);
        return FALSE;
    }
    gint64 uid = web_user_uid(header);
    if (uid < 0) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_FORBIDDEN,
                    "user %s has no account on the web server, so their runs cannot be told "
                    "from others'",
                    header);
        return FALSE;
    }
    out->user = g_strdup(header);
    out->uid = uid;
    out->admin = s->admins != NULL && g_strv_contains((const char *const *)s->admins, header);
    return TRUE;
}

void web_viewer_clear(struct web_viewer *v)
{
    g_free(v->user);
    memset(v, 0, sizeof *v);
    v->uid = -1;
}
