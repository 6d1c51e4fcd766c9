/* vigild — whose a name is (owners.c): a run key's first user, a
 * scheduler job's user as root told it. */
#ifndef VIGILD_OWNERS_H
#define VIGILD_OWNERS_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

struct vigild_owners;

/* A table of at most `max_names` names (printable ASCII without spaces),
 * kept across restarts in `file_name` of the state folder. */
struct vigild_owners *vigild_owners_new(guint max_names, const char *file_name);
void vigild_owners_free(struct vigild_owners *o);
/* The uid `name` is, at `now_ns` (CLOCK_MONOTONIC); FALSE when not known,
 * or no longer (its time passed, or it was the least recently used of
 * max_names). Known ones become the most recently used. */
gboolean vigild_owners_lookup(struct vigild_owners *o, const char *name, uint64_t now_ns,
                              uid_t *uid);
/* `name` is `uid`'s, until `until_ns` (0: until it is forgotten as the
 * least recently used). */
void vigild_owners_set(struct vigild_owners *o, const char *name, uid_t uid, uint64_t until_ns);
guint vigild_owners_count(const struct vigild_owners *o);
/* Writes DIR/FILE when something changed since it was last written or
 * read; reads it (a vigild before this one wrote it). Neither fails the
 * daemon: a problem is logged once. */
void vigild_owners_save(struct vigild_owners *o, const char *dir);
void vigild_owners_load(struct vigild_owners *o, const char *dir);

#endif
