/* vigil — CURVE keys for the link between vigild and vigil-txd.
 *
 * A key pair lives in a file that `vigil keygen FILE` writes, readable by
 * its owner alone:
 *
 *   [curve]
 *   public = <40 Z85 characters>
 *   secret = <40 Z85 characters>
 *
 * and FILE.pub holds the public key alone, one line, so that an admin can
 * append it to vigil-txd's list of admitted daemons ([txd]
 * curve_authorized_keys: one key a line, # starts a comment). */
#ifndef VIGIL_CURVE_H
#define VIGIL_CURVE_H

#include <stdbool.h>
#include <glib.h>

#define VIGIL_CURVE_KEY_CHARS 40 /* Z85 of 32 bytes */

struct vigil_curve_pair {
    char public_key[VIGIL_CURVE_KEY_CHARS + 1];
    char secret_key[VIGIL_CURVE_KEY_CHARS + 1];
};

/* 40 characters of the Z85 alphabet. */
bool vigil_curve_key_valid(const char *z85);

/* Makes a new pair and writes FILE (mode 0600) and FILE.pub; refuses to
 * overwrite either. */
gboolean vigil_curve_keygen(const char *path, struct vigil_curve_pair *out, GError **error);

/* Reads a pair; a file that others than its owner may read is refused,
 * since its secret would not be one. */
gboolean vigil_curve_pair_read(const char *path, struct vigil_curve_pair *out, GError **error);

/* The admitted public keys, each checked; an error names the line. The
 * array is NULL-terminated: g_strfreev it. */
char **vigil_curve_authorized_read(const char *path, GError **error);

#endif
