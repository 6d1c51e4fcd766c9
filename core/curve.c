/* vigil — CURVE key files (curve.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "vigil/config.h"
#include "vigil/curve.h"

bool vigil_curve_key_valid(const char *z85)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   ".-:+=^!/*?&<>()[]{}@%$#";
    if (z85 == NULL || strlen(z85) != VIGIL_CURVE_KEY_CHARS)
        return false;
    for (const char *c = z85; *c != '\0'; c++)
        if (strchr(alphabet, *c) == NULL)
            return false;
    return true;
}

/* Creates `path` with `mode` and `text`, failing when it exists. */
static gboolean write_new_file(const char *path, mode_t mode, const char *text, GError **error)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create %s: %s%s", path,
                    g_strerror(e), e == EEXIST ? " (keys are never overwritten)" : "");
        return FALSE;
    }
    size_t length = strlen(text);
    gboolean ok = write(fd, text, length) == (ssize_t)length && fsync(fd) == 0;
    int e = errno;
    if (close(fd) != 0)
        ok = FALSE;
    if (!ok) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", path,
                    g_strerror(e));
        unlink(path);
    }
    return ok;
}

gboolean vigil_curve_keygen(const char *path, struct vigil_curve_pair *out, GError **error)
{
    struct vigil_curve_pair pair;
    if (zmq_curve_keypair(pair.public_key, pair.secret_key) != 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "cannot make a CURVE key pair: %s (is libzmq built with libsodium?)",
                    zmq_strerror(zmq_errno()));
        return FALSE;
    }
    char *secret_text =
        g_strdup_printf("# vigil CURVE key pair: keep this file to its owner.\n[curve]\n"
                        "public = %s\nsecret = %s\n",
                        pair.public_key, pair.secret_key);
    char *public_path = g_strconcat(path, ".pub", NULL);
    char *public_text = g_strdup_printf("%s\n", pair.public_key);
    gboolean ok = write_new_file(path, 0600, secret_text, error);
    if (ok && !write_new_file(public_path, 0644, public_text, error)) {
        unlink(path);
        ok = FALSE;
    }
    if (ok && out != NULL)
        *out = pair;
    memset(&pair, 0, sizeof pair);
    memset(secret_text, 0, strlen(secret_text));
    g_free(secret_text);
    g_free(public_text);
    g_free(public_path);
    return ok;
}

static gboolean read_key(GKeyFile *file, const char *path, const char *name, char *out,
                         GError **error)
{
    char *value = g_key_file_get_string(file, "curve", name, NULL);
    if (value != NULL)
        g_strstrip(value);
    if (!vigil_curve_key_valid(value)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "%s: [curve] %s must be %d characters of Z85 (as `vigil keygen` writes it)",
                    path, name, VIGIL_CURVE_KEY_CHARS);
        g_free(value);
        return FALSE;
    }
    memcpy(out, value, VIGIL_CURVE_KEY_CHARS + 1);
    memset(value, 0, strlen(value));
    g_free(value);
    return TRUE;
}

gboolean vigil_curve_pair_read(const char *path, struct vigil_curve_pair *out, GError **error)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "CURVE key file %s: %s", path,
                    g_strerror(e));
        return FALSE;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                    "CURVE key file %s is not a regular file", path);
        return FALSE;
    }
    if ((st.st_mode & 077) != 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
                    "CURVE key file %s may be read by others (mode %04o): its secret is not one; "
                    "chmod 600 it, or make a new pair with `vigil keygen`",
                    path, (unsigned)(st.st_mode & 07777));
        return FALSE;
    }
    GKeyFile *file = g_key_file_new();
    GError *local = NULL;
    gboolean ok = g_key_file_load_from_file(file, path, G_KEY_FILE_NONE, &local);
    if (!ok) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_PARSE, "CURVE key file %s: %s", path,
                    local->message);
        g_error_free(local);
    }
    ok = ok && read_key(file, path, "public", out->public_key, error) &&
         read_key(file, path, "secret", out->secret_key, error);
    g_key_file_free(file);
    /* A pair whose halves do not belong together fails only at the
     * handshake, as an opaque refusal: say so here. */
    char derived[VIGIL_CURVE_KEY_CHARS + 1];
    if (ok && (zmq_curve_public(derived, out->secret_key) != 0 ||
               strcmp(derived, out->public_key) != 0)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "CURVE key file %s: [curve] public is not the public key of [curve] secret",
                    path);
        ok = FALSE;
    }
    if (!ok)
        memset(out, 0, sizeof *out);
    return ok;
}

char **vigil_curve_authorized_read(const char *path, GError **error)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, error))
        return NULL;
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
    gboolean ok = TRUE;
    for (guint i = 0; ok && lines[i] != NULL; i++) {
        char *line = g_strstrip(lines[i]);
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if (!vigil_curve_key_valid(line)) {
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                        "%s:%u: not a CURVE public key (%d characters of Z85 expected)", path,
                        i + 1, VIGIL_CURVE_KEY_CHARS);
            ok = FALSE;
        } else {
            g_ptr_array_add(keys, g_strdup(line));
        }
    }
    g_strfreev(lines);
    if (!ok) {
        g_ptr_array_unref(keys);
        return NULL;
    }
    g_ptr_array_add(keys, NULL);
    return (char **)g_ptr_array_free(keys, FALSE);
}

gboolean vigil_curve_key_check(const char *what, const char *z85, GError **error)
{
    static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   ".-:+=^!/*?&<>()[]{}@%$#";
    size_t length = strlen(z85);
    size_t good = strspn(z85, alphabet);
    uint8_t binary[32];
    if (length != VIGIL_CURVE_KEY_CHARS)
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "%s: a CURVE key is 40 characters of Z85, this one has %zu", what, length);
    else if (good != length)
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "%s: character %zu ('%c') is not in the Z85 alphabet", what, good + 1,
                    g_ascii_isprint(z85[good]) ? z85[good] : '?');
    else if (zmq_z85_decode(binary, z85) == NULL)
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "%s: not a valid Z85 key (a group of five characters is out of range)", what);
    else
        return TRUE;
    return FALSE;
}

/* Both keys of a pair of settings set, or neither. */
static gboolean both_or_neither(const char *section, const char *a_name, const char *a,
                                const char *b_name, const char *b, const char *why, GError **error)
{
    if ((a[0] != '\0') == (b[0] != '\0'))
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "[%s] %s and %s go together: %s is set and %s is empty%s", section, a_name, b_name,
                a[0] != '\0' ? a_name : b_name, a[0] != '\0' ? b_name : a_name, why);
    return FALSE;
}

static gboolean check_key_file(const char *section, const char *path, GError **error)
{
    struct vigil_curve_pair pair;
    GError *e = NULL;
    gboolean ok = vigil_curve_pair_read(path, &pair, &e);
    memset(&pair, 0, sizeof pair);
    if (!ok) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[%s] curve_key_file: %s", section, e->message);
        g_error_free(e);
    }
    return ok;
}

gboolean vigil_curve_check_client(const char *section, const char *server_key, const char *key_file,
                                  GError **error)
{
    if (!both_or_neither(section, "curve_server_key", server_key, "curve_key_file", key_file, "",
                         error))
        return FALSE;
    if (server_key[0] == '\0')
        return TRUE;
    char *what = g_strdup_printf("[%s] curve_server_key", section);
    gboolean ok = vigil_curve_key_check(what, server_key, error);
    g_free(what);
    return ok && check_key_file(section, key_file, error);
}

gboolean vigil_curve_check_server(const char *section, const char *key_file,
                                  const char *authorized_keys, GError **error)
{
    if (!both_or_neither(
            section, "curve_key_file", key_file, "curve_authorized_keys", authorized_keys,
            ": a server key without a list of daemons' keys would admit any key", error))
        return FALSE;
    if (key_file[0] == '\0')
        return TRUE;
    if (!check_key_file(section, key_file, error))
        return FALSE;
    GError *e = NULL;
    char **keys = vigil_curve_authorized_read(authorized_keys, &e);
    if (keys == NULL) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[%s] curve_authorized_keys: %s", section, e->message);
        g_error_free(e);
        return FALSE;
    }
    g_strfreev(keys);
    return TRUE;
}
