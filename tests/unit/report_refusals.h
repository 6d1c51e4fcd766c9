/* vigil — what the report tests share to check that `vigil report`'s
 * reader (report/report_json.c) refuses a damaged report and names what is
 * wrong. Included by test_report_json.c and test_report_files_mpi.c after
 * cmocka.h, glib.h, report_json.h and test_support.h. */
#ifndef VIGIL_TEST_REPORT_REFUSALS_H
#define VIGIL_TEST_REPORT_REFUSALS_H

static void expect_refused(const char *json, const char *message)
{
    struct vigil_cli_report back;
    GError *error = NULL;
    if (vigil_cli_report_parse(json, -1, &back, &error))
        fail_msg("accepted, though %s:\n%s", message, json);
    test_assert_contains(error->message, message);
    g_error_free(error);
}

/* `json` with the first `from` replaced by `to`. */
static char *edited(const char *json, const char *from, const char *to)
{
    const char *at = strstr(json, from);
    assert_non_null(at); /* the report has the text to edit */
    return g_strdup_printf("%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
}

#endif
