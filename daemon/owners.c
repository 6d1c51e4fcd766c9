/* vigild — whose a name is: a run key belongs to the uid of its first
 * process on the node, a Slurm job to the uid root told vigild it is.
 * Both must outlive the processes that made them (a run whose processes
 * all ended is still its user's) and a restart of vigild, but not grow
 * without bound: at most `max_names`, the least recently used forgotten
 * first, and a name with an end time forgotten once it passed.
 *
 * What is forgotten here is not given away: the warehouse keeps every
 * run's uid for good, and keeps another user's process out of it
 * whatever a node says (txd/store.c).
 *
 * The file is a line per name, least recently used first: "UID UNTIL
 * NAME", UNTIL being CLOCK_MONOTONIC ns (0: none), which holds across a
 * restart of vigild but not of the machine; it lives in the state folder
 * (/run by default), which a reboot empties. Rewritten whole (a temporary
 * file renamed over it, no fsync: it must survive vigild, not the
 * machine) at most once a cycle, and only when something changed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>

#include "owners.h"

struct owner {
    char *name;
    uid_t uid;
    uint64_t until_ns;
    GList link; /* in the recency queue */
};

struct vigild_owners {
    GHashTable *by_name; /* name → struct owner * */
    GQueue recency;      /* struct owner *, least recently used first */
    guint max_names;
    char *file_name;
    gboolean changed;
    gboolean save_failed_logged;
};

static void owner_free(gpointer data)
{
    struct owner *e = data;
    g_free(e->name);
    g_free(e);
}

struct vigild_owners *vigild_owners_new(guint max_names, const char *file_name)
{
    struct vigild_owners *o = g_new0(struct vigild_owners, 1);
    o->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, owner_free);
    g_queue_init(&o->recency);
    o->max_names = max_names;
    o->file_name = g_strdup(file_name);
    return o;
}

void vigild_owners_free(struct vigild_owners *o)
{
    if (o == NULL)
        return;
    g_hash_table_destroy(o->by_name); /* the queue's links are in its entries */
    g_free(o->file_name);
    g_free(o);
}

static void forget(struct vigild_owners *o, struct owner *e)
{
    g_queue_unlink(&o->recency, &e->link);
    g_hash_table_remove(o->by_name, e->name);
    o->changed = TRUE;
}

gboolean vigild_owners_lookup(struct vigild_owners *o, const char *name, uint64_t now_ns,
                              uid_t *uid)
{
    struct owner *e = g_hash_table_lookup(o->by_name, name);
    if (e == NULL)
        return FALSE;
    if (e->until_ns != 0 && e->until_ns < now_ns) {
        forget(o, e);
        return FALSE;
    }
    g_queue_unlink(&o->recency, &e->link);
    g_queue_push_tail_link(&o->recency, &e->link);
    *uid = e->uid;
    return TRUE;
}

void vigild_owners_set(struct vigild_owners *o, const char *name, uid_t uid, uint64_t until_ns)
{
    struct owner *e = g_hash_table_lookup(o->by_name, name);
    if (e != NULL) {
        g_queue_unlink(&o->recency, &e->link);
        o->changed |= e->uid != uid || e->until_ns != until_ns;
    } else {
        while (g_hash_table_size(o->by_name) >= o->max_names && o->recency.head != NULL)
            forget(o, o->recency.head->data);
        e = g_new0(struct owner, 1);
        e->name = g_strdup(name);
        e->link.data = e;
        g_hash_table_insert(o->by_name, e->name, e);
        o->changed = TRUE;
    }
    e->uid = uid;
    e->until_ns = until_ns;
    g_queue_push_tail_link(&o->recency, &e->link);
}

guint vigild_owners_count(const struct vigild_owners *o)
{
    return g_hash_table_size(o->by_name);
}

void vigild_owners_save(struct vigild_owners *o, const char *dir)
{
    if (!o->changed || dir == NULL)
        return;
    GString *text = g_string_new(NULL);
    for (GList *l = o->recency.head; l != NULL; l = l->next) {
        const struct owner *e = l->data;
        g_string_append_printf(text, "%u %" PRIu64 " %s\n", (unsigned)e->uid, e->until_ns, e->name);
    }
    char *path = g_build_filename(dir, o->file_name, NULL);
    char *temporary = g_strconcat(path, ".new", NULL);
    FILE *f = fopen(temporary, "we");
    gboolean ok = f != NULL && fwrite(text->str, 1, text->len, f) == text->len;
    int saved = errno;
    if (f != NULL && fclose(f) != 0 && ok) {
        ok = FALSE;
        saved = errno;
    }
    if (ok && g_rename(temporary, path) != 0) {
        ok = FALSE;
        saved = errno;
    }
    if (ok) {
        o->changed = FALSE;
        o->save_failed_logged = FALSE;
    } else if (!o->save_failed_logged) {
        g_warning("cannot keep %s for a restart: %s", path, g_strerror(saved));
        o->save_failed_logged = TRUE;
    }
    g_free(temporary);
    g_free(path);
    g_string_free(text, TRUE);
}

void vigild_owners_load(struct vigild_owners *o, const char *dir)
{
    char *path = g_build_filename(dir, o->file_name, NULL);
    char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error)) {
        if (!g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            g_warning("restart: %s", error->message);
        g_error_free(error);
        g_free(path);
        return;
    }
    guint bad = 0, line_number = 0;
    char **lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        line_number++;
        if ((*line)[0] == '\0')
            continue;
        unsigned uid = 0;
        uint64_t until_ns = 0;
        int name_at = 0;
        const char *name = NULL;
        if (sscanf(*line, "%u %" SCNu64 " %n", &uid, &until_ns, &name_at) == 2 && name_at > 0)
            name = *line + name_at;
        if (name == NULL || name[0] == '\0' || strchr(name, ' ') != NULL) {
            if (bad++ == 0)
                g_warning("restart: %s line %u is not \"UID UNTIL NAME\"; such lines are skipped",
                          path, line_number);
            continue;
        }
        vigild_owners_set(o, name, (uid_t)uid, until_ns);
    }
    o->changed = bad > 0;
    g_strfreev(lines);
    g_free(text);
    g_free(path);
}
