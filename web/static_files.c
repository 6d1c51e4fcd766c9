/* vigil-web — the pages and uPlot. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "static_files.h"

enum { STATIC_FILE_MAX_BYTES = 16 * 1024 * 1024 };

static const struct {
    const char *suffix, *type;
} content_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".map", "application/json"},
};

static const char *content_type_of(const char *path)
{
    for (gsize i = 0; i < G_N_ELEMENTS(content_types); i++)
        if (g_str_has_suffix(path, content_types[i].suffix))
            return content_types[i].type;
    return NULL;
}

static void answer_text(SoupServerMessage *msg, guint status, const char *text)
{
    soup_server_message_set_status(msg, status, NULL);
    soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY, text,
                                     strlen(text));
}

/* A relative path made only of plain names: no empty, "." or ".."
 * segment, nothing hidden, no backslash or NUL. */
static gboolean relative_path_is_safe(const char *rel)
{
    if (rel[0] == '\0' || strlen(rel) > 1024)
        return FALSE;
    char **parts = g_strsplit(rel, "/", -1);
    gboolean safe = TRUE;
    for (guint i = 0; parts[i] != NULL && safe; i++)
        safe = parts[i][0] != '\0' && parts[i][0] != '.' && strchr(parts[i], '\\') == NULL;
    g_strfreev(parts);
    return safe;
}

/* The file's real path when it is a regular file inside `root`, else NULL. */
static char *resolve_inside(const char *root, const char *rel)
{
    char *real_root = realpath(root, NULL);
    char *joined = g_build_filename(root, rel, NULL);
    char *real = realpath(joined, NULL);
    g_free(joined);
    char *inside = NULL;
    struct stat st;
    if (real_root != NULL && real != NULL && g_str_has_prefix(real, real_root) &&
        real[strlen(real_root)] == '/' && stat(real, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size <= STATIC_FILE_MAX_BYTES)
        inside = g_strdup(real);
    free(real_root);
    free(real);
    return inside;
}

void web_static_serve(const struct web_settings *s, SoupServerMessage *msg, const char *path)
{
    const char *root = NULL, *rel = NULL;
    gboolean vendor = FALSE;
    if (strcmp(path, "/") == 0) {
        root = s->static_dir;
        rel = "index.html";
    } else if (g_str_has_prefix(path, "/static/")) {
        root = s->static_dir;
        rel = path + strlen("/static/");
    } else if (g_str_has_prefix(path, "/vendor/uplot/")) {
        root = s->vendor_dir;
        rel = path + strlen("/vendor/uplot/");
        vendor = TRUE;
    } else if (strchr(path + 1, '/') == NULL && g_str_has_suffix(path, ".html")) {
        root = s->static_dir;
        rel = path + 1;
    }
    /* The path arrives percent-encoded: decoded, it must still be plain. */
    char *decoded = rel != NULL ? g_uri_unescape_string(rel, NULL) : NULL;
    char *file = decoded != NULL && relative_path_is_safe(decoded) && content_type_of(decoded)
                     ? resolve_inside(root, decoded)
                     : NULL;
    if (file == NULL) {
        answer_text(msg, SOUP_STATUS_NOT_FOUND, "vigil-web: no such page\n");
        g_free(decoded);
        return;
    }
    GError *error = NULL;
    GMappedFile *mapped = g_mapped_file_new(file, FALSE, &error);
    if (mapped == NULL) {
        g_warning("%s: %s", file, error->message);
        answer_text(msg, SOUP_STATUS_NOT_FOUND, "vigil-web: no such page\n");
        g_error_free(error);
    } else {
        GBytes *bytes = g_mapped_file_get_bytes(mapped);
        soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
        SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
        soup_message_headers_replace(h, "Content-Type", content_type_of(decoded));
        /* uPlot changes only with package-lock.json; the pages with every
         * build, and must not be stale after an upgrade. */
        soup_message_headers_replace(h, "Cache-Control",
                                     vendor ? "public, max-age=86400" : "no-cache");
        soup_message_body_append_bytes(soup_server_message_get_response_body(msg), bytes);
        g_bytes_unref(bytes);
        g_mapped_file_unref(mapped);
    }
    g_free(file);
    g_free(decoded);
}
