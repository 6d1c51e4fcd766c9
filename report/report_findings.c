/* vigil — the report's findings (vigil/insight.h makes them): a list after
 * the figures in the text, the top-level "findings" and
 * "findings_thresholds" in the JSON. A report from a vigil that made none
 * (findings_thresholds NULL) prints neither, as that vigil did. */
#include "report_put.h"

#define put_text   vigil_report_put_text
#define put_printf vigil_report_put_printf

void vigil_report_text_findings(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (r->findings_thresholds == NULL)
        return;
    put_text(s, "\nfindings (thresholds: ");
    vigil_report_put_clean(s, r->findings_thresholds, 0);
    put_text(s, r->finding_count == 0 ? "): none\n" : ")\n");
    for (int i = 0; i < r->finding_count; i++) {
        const struct vigil_report_finding *f = &r->findings[i];
        vigil_report_put_clean(s, f->severity, 0);
        put_text(s, " ");
        vigil_report_put_clean(s, f->id, 0);
        if (f->file != NULL) {
            put_text(s, ": ");
            vigil_report_put_clean_bytes(s, f->file, f->file_bytes);
        }
        if (f->rank >= 0)
            put_printf(s, " (rank %d)", (int)f->rank);
        put_text(s, "\n  ");
        vigil_report_put_clean(s, f->evidence, 0);
        put_text(s, "\n  what to change: ");
        vigil_report_put_clean(s, f->advice, 0);
        put_text(s, "\n");
    }
}

void vigil_report_json_findings(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (r->findings_thresholds == NULL)
        return;
    put_text(s, ",\"findings\":[");
    for (int i = 0; i < r->finding_count; i++) {
        const struct vigil_report_finding *f = &r->findings[i];
        put_text(s, i > 0 ? ",{\"id\":" : "{\"id\":");
        vigil_report_put_json_string(s, f->id);
        put_text(s, ",\"severity\":");
        vigil_report_put_json_string(s, f->severity);
        put_text(s, ",\"file\":");
        if (f->file != NULL)
            vigil_report_put_json_bytes(s, f->file, f->file_bytes);
        else
            put_text(s, "null");
        if (f->rank >= 0)
            put_printf(s, ",\"rank\":%d", (int)f->rank);
        else
            put_text(s, ",\"rank\":null");
        put_text(s, ",\"evidence\":");
        vigil_report_put_json_string(s, f->evidence);
        put_text(s, ",\"advice\":");
        vigil_report_put_json_string(s, f->advice);
        put_text(s, "}");
    }
    put_text(s, "],\"findings_thresholds\":");
    vigil_report_put_json_string(s, r->findings_thresholds);
}
