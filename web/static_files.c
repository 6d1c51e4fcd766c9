/* vigil-web — the pages and uPlot. */
#include <stdio.h>
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

/* A page whose first line is
 *     <!-- page title="TITLE" script="SCRIPT" -->
 * holds only its <main>'s content: it is served inside page.tmpl beside it,
 * which holds what every page shares (the head, the header and its nav),
 * with @TITLE@, @SCRIPT@ and @MAIN@ replaced. NULL, with a warning, when the
 * template cannot be read. */
static GBytes *page_in_template(const char *file, const char *title, const char *script,
                                const char *main_html, gsize main_bytes)
{
    const struct {
        const char *mark, *value;
        gssize length;
    } fields[] = {
        {"@TITLE@", title, -1},
        {"@SCRIPT@", script, -1},
        {"@MAIN@", main_html, (gssize)main_bytes},
    };
    char *dir = g_path_get_dirname(file);
    char *template_path = g_build_filename(dir, "page.tmpl", NULL);
    g_free(dir);
    char *template = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(template_path, &template, NULL, &error)) {
        g_warning("%s: %s", template_path, error->message);
        g_error_free(error);
        g_free(template_path);
        return NULL;
    }
    g_free(template_path);
    GString *page = g_string_new(NULL);
    const char *at = template, *mark;
    while ((mark = strchr(at, '@')) != NULL) {
        g_string_append_len(page, at, mark - at);
        guint i = 0;
        while (i < G_N_ELEMENTS(fields) && !g_str_has_prefix(mark, fields[i].mark))
            i++;
        if (i < G_N_ELEMENTS(fields)) {
            g_string_append_len(page, fields[i].value, fields[i].length);
            at = mark + strlen(fields[i].mark);
        } else {
            g_string_append_c(page, '@');
            at = mark + 1;
        }
    }
    g_string_append(page, at);
    g_free(template);
    return g_string_free_to_bytes(page);
}

/* The bytes to serve for `file`: a page (see page_in_template) in its
 * template, anything else as it is. Takes `bytes`; NULL when a page's
 * template is missing. */
static GBytes *served_bytes(const char *file, GBytes *bytes)
{
    gsize n = 0;
    const char *data = g_bytes_get_data(bytes, &n);
    const char *line_end = n > 0 ? memchr(data, '\n', n) : NULL;
    if (line_end == NULL || !g_str_has_suffix(file, ".html"))
        return bytes;
    char *line = g_strndup(data, (gsize)(line_end - data));
    char title[256], script[256];
    int used = -1;
    gboolean page = sscanf(line, "<!-- page title=\"%255[^\"]\" script=\"%255[^\"]\" -->%n", title,
                           script, &used) == 2 &&
                    used == (int)strlen(line);
    g_free(line);
    if (!page)
        return bytes;
    const char *main_html = line_end + 1;
    GBytes *served =
        page_in_template(file, title, script, main_html, n - (gsize)(main_html - data));
    g_bytes_unref(bytes);
    return served;
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
    GBytes *bytes = mapped != NULL ? served_bytes(file, g_mapped_file_get_bytes(mapped)) : NULL;
    if (mapped == NULL) {
        g_warning("%s: %s", file, error->message);
        answer_text(msg, SOUP_STATUS_NOT_FOUND, "vigil-web: no such page\n");
        g_error_free(error);
    } else if (bytes == NULL) {
        answer_text(msg, SOUP_STATUS_NOT_FOUND, "vigil-web: no such page\n");
        g_mapped_file_unref(mapped);
    } else {
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
