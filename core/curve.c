/* vigil — CURVE key files (curve.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

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
