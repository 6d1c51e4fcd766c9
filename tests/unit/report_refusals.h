/* vigil — what the report tests share to check that `vigil report`'s
 * reader (report/report_json.c) refuses a damaged report and names what is
 * wrong, and reads what it must accept; and the two forms of a figure set. Included by
 * test_report_json.c and test_report_files_mpi.c after cmocka.h, glib.h, report_json.h and
 * test_support.h. */
#ifndef VIGIL_TEST_REPORT_REFUSALS_H
#define VIGIL_TEST_REPORT_REFUSALS_H

static inline void expect_refused(const char *json, const char *message)
{
    struct vigil_cli_report back;
    GError *error = NULL;
    if (vigil_cli_report_parse(json, -1, &back, &error))
        fail_msg("accepted, though %s:\n%s", message, json);
    test_assert_contains(error->message, message);
    g_error_free(error);
}

/* `json` with the first `from` replaced by `to`. */
static inline char *edited(const char *json, const char *from, const char *to)
{
    const char *at = strstr(json, from);
    assert_non_null(at); /* the report has the text to edit */
    return g_strdup_printf("%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
}

/* The text and the JSON of the figures `fill` makes (g_free them). */
static inline char *report_text_of(void (*fill)(struct vigil_report *))
{
    static struct vigil_report f;
    fill(&f);
    return vigil_cli_report_text(&f);
}

static inline char *report_json_of(void (*fill)(struct vigil_report *))
{
    static struct vigil_report f;
    fill(&f);
    return vigil_cli_report_json(&f);
}

/* A change to a report's JSON, and what the reader must say of it. */
struct report_edit {
    const char *from, *to, *message;
};

/* The JSON of the figures `fill` makes, with each of edits[] made to it in
 * turn, is refused with that edit's message. */
static inline void expect_edits_refused(void (*fill)(struct vigil_report *),
                                        const struct report_edit *edits, size_t n)
{
    char *json = report_json_of(fill);
    for (size_t i = 0; i < n; i++) {
        char *bad = edited(json, edits[i].from, edits[i].to);
        expect_refused(bad, edits[i].message);
        g_free(bad);
    }
    g_free(json);
}

/* The JSON of the figures `fill` makes, without `cut` (as an earlier vigil
 * wrote it), is read into *back (vigil_cli_report_clear it). Returns that
 * JSON (g_free it). */
static inline char *read_back_without(void (*fill)(struct vigil_report *), const char *cut,
                                      struct vigil_cli_report *back)
{
    char *json = report_json_of(fill);
    char *old = edited(json, cut, "");
    g_free(json);
    GError *error = NULL;
    if (!vigil_cli_report_parse(old, -1, back, &error))
        fail_msg("refused: %s", error->message);
    return old;
}

#endif
