/* vigil — a report's findings read back from its JSON: "findings" and
 * "findings_thresholds" (report/report_findings.c writes them), both absent
 * in a report from a vigil that made none. As strict as the rest of
 * report_json.c (report_json_reader.h): `vigil report` prints the findings
 * stored with the report, not new ones. */
#include <limits.h>
#include <string.h>

#include "report_json_reader.h"

static void read_finding(struct report_reader *rd, JsonObject *o, const char *where,
                         struct vigil_report_finding *f)
{
    f->id = report_string_member(rd, o, where, "id", FALSE);
    if (f->id[0] == '\0' && !rd->failed)
        report_fail(rd, where, "id: empty");
    f->severity = report_string_member(rd, o, where, "severity", FALSE);
    if (strcmp(f->severity, "warning") != 0 && strcmp(f->severity, "info") != 0 && !rd->failed)
        report_fail(rd, where, "severity: \"%s\" is neither warning nor info", f->severity);
    JsonNode *file = report_member(rd, o, where, "file");
    f->file = file != NULL && !report_is_null(file)
                  ? report_string_of(rd, file, where, "file", FALSE)
                  : NULL;
    f->file_bytes = f->file != NULL ? strlen(f->file) : 0;
    JsonNode *rank = report_member(rd, o, where, "rank");
    f->rank = rank != NULL && !report_is_null(rank) ? report_rank_member(rd, o, where, "rank") : -1;
    f->evidence = report_string_member(rd, o, where, "evidence", FALSE);
    f->advice = report_string_member(rd, o, where, "advice", FALSE);
}

void report_read_findings(struct report_reader *rd, JsonObject *root)
{
    struct vigil_report *r = &rd->out->r;
    if (!json_object_has_member(root, "findings") &&
        !json_object_has_member(root, "findings_thresholds"))
        return;
    r->findings_thresholds = report_string_member(rd, root, "", "findings_thresholds", FALSE);
    JsonArray *a = report_array_member(rd, root, "", "findings");
    guint count = a != NULL ? json_array_get_length(a) : 0;
    if (count > INT_MAX / 2) {
        report_fail(rd, "findings", "%u entries, more than a report can hold", count);
        return;
    }
    rd->out->findings = g_new0(struct vigil_report_finding, count > 0 ? count : 1);
    for (guint i = 0; i < count && !rd->failed; i++) {
        char *where = g_strdup_printf("findings.%u", i);
        JsonObject *o = report_object_of(rd, json_array_get_element(a, i), where);
        if (o != NULL)
            read_finding(rd, o, where, &rd->out->findings[i]);
        g_free(where);
    }
    r->findings = rd->out->findings;
    r->finding_count = (int)count;
}
