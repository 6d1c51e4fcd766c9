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

#include "vigil/config.h"

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

/* Reads a pair: the file must exist, be a regular file that no one but its
 * owner may read or write (its secret would not be one), parse, and its
 * public key be the secret key's. */
gboolean vigil_curve_pair_read(const char *path, struct vigil_curve_pair *out, GError **error);

/* The admitted public keys, each checked; an error names the line. The
 * array is NULL-terminated: g_strfreev it. */
char **vigil_curve_authorized_read(const char *path, GError **error);

/* A CURVE key given in a setting (`what` names it): 40 characters of Z85
 * that decode. */
gboolean vigil_curve_key_check(const char *what, const char *z85, GError **error);

/* The CURVE settings of a client (vigild's [uplink] curve_server_key and
 * curve_key_file) and of a server (vigil-txd's [txd] curve_key_file and
 * curve_authorized_keys), checked the way the programs use them: the keys
 * of a pair set together, a server key that decodes, a key file that
 * vigil_curve_pair_read takes, an admitted-keys list that
 * vigil_curve_authorized_read takes. The error names the section and key;
 * `vigil config check` runs them with the sections' tables. */
gboolean vigil_curve_check_client(const char *section, const char *server_key, const char *key_file,
                                  GError **error);
gboolean vigil_curve_check_server(const char *section, const char *key_file,
                                  const char *authorized_keys, GError **error);
#endif
