/* vigil advise: the advice printed, for people or as JSON (advise.h).
 * Every prediction is labelled a model estimate. */
#include <math.h>
#include <stdio.h>
#include <json-glib/json-glib.h>

#include "advise.h"
#include "vigil/json_members.h"

static void print_run_text(const struct run_facts *f)
{
    printf("Run %s (%s): %s\n", f->run_id, f->run_key, f->argv);
    printf("  time %.3f s on %d node%s", f->duration_s, f->nodes, f->nodes == 1 ? "" : "s");
    if (!isnan(f->power_w))
        printf(", mean power %.2f W, energy %.1f J (%s, %s)", f->power_w, f->energy_j,
               f->energy_metric, f->estimated_windows > 0 ? "ESTIMATED" : "measured");
    printf("\n");
    if (!isnan(f->attributed_energy_j))
        printf("  its processes' share of that energy by CPU time: %.1f J (not used)\n",
               f->attributed_energy_j);
    if (!isnan(f->frequency_hz))
        printf("  mean CPU frequency %.3f GHz (cpu.frequency_hz, %ld roll-ups)\n",
               f->frequency_hz / 1e9, f->frequency_windows);
    if (!isnan(f->min_frequency_hz) && !isnan(f->max_frequency_hz))
        printf("  the node's range: %.3f to %.3f GHz\n", f->min_frequency_hz / 1e9,
               f->max_frequency_hz / 1e9);
}

static void print_list(const char *title, const GPtrArray *items)
{
    if (items->len == 0)
        return;
    printf("\n%s\n", title);
    for (guint i = 0; i < items->len; i++)
        printf("  - %s\n", (const char *)g_ptr_array_index(items, i));
}

void advise_print_text(const struct advice *a)
{
    printf("Frequency advice for %s — a MODEL ESTIMATE (the Fluid model), not a measurement\n\n",
           a->runs[0].program);
    for (int i = 0; i < a->n_runs; i++)
        print_run_text(&a->runs[i]);
    print_list("Notes:", a->notes);
    if (!a->fitted) {
        print_list("Missing:", a->missing);
        if (a->others != NULL)
            printf("\n%s", a->others);
        return;
    }
    const struct vigil_fluid_model *m = &a->model;
    printf("\nModel: D(f) = ((1-α) + α·F_max/f)·D(F_max), P(f) = P_static + P_dyn·(f/F_max)^c\n");
    printf("  F_max     %.3f GHz (cpu.frequency_max_hz)\n", m->max_frequency_hz / 1e9);
    printf("  D(F_max)  %.3f s\n", m->duration_at_max_s);
    printf("  α         %.4f (the share of the time that scales with 1/f)\n", m->alpha);
    printf("  P_static  %.2f W\n", m->static_power_w);
    printf("  P_dyn     %.2f W\n", m->dynamic_power_w);
    if (m->exponent_fitted)
        printf("  c         %.3f (fitted to %zu per-second points at %u frequencies, rms %.2f W)\n",
               m->exponent, m->points_used, m->distinct_frequencies, m->power_rms_w);
    else if (m->exponent_note[0] != '\0')
        printf("  c         %.3f (fixed, not fitted: the per-second points at %u frequencies "
               "did not fit: %s; [advise] power_exponent or --exponent)\n",
               m->exponent, m->distinct_frequencies, m->exponent_note);
    else
        printf("  c         %.3f (fixed, not fitted: the runs' per-second frequency took %u "
               "value%s, c needs three; [advise] power_exponent or --exponent)\n",
               m->exponent, m->distinct_frequencies, m->distinct_frequencies == 1 ? "" : "s");
    printf("\nPredicted at the frequencies the node offers (%.3f to %.3f GHz in %.0f MHz steps, "
           "assumed):\n",
           a->min_frequency_hz / 1e9, m->max_frequency_hz / 1e9, a->step_hz / 1e6);
    printf("  %9s  %12s  %10s  %14s  %16s\n", "GHz", "time s", "power W", "energy J", "E·D J·s");
    for (guint i = 0; i < a->predictions->len; i++) {
        const struct vigil_fluid_prediction *p =
            &g_array_index(a->predictions, struct vigil_fluid_prediction, i);
        printf("  %9.3f  %12.3f  %10.2f  %14.1f  %16.1f%s%s\n", p->frequency_hz / 1e9,
               p->duration_s, p->power_w, p->energy_j, p->energy_delay_js,
               i == a->least_energy ? "  <- least energy" : "",
               i == a->least_energy_delay ? "  <- least E·D" : "");
    }
    const struct vigil_fluid_prediction *e =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy);
    const struct vigil_fluid_prediction *d =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy_delay);
    const struct vigil_fluid_prediction *top =
        &g_array_index(a->predictions, struct vigil_fluid_prediction, a->predictions->len - 1);
    printf("\nLeast energy (model estimate): %.3f GHz, %.1f J in %.3f s (%+.1f %% energy, %+.1f "
           "%% time against %.3f GHz)\n",
           e->frequency_hz / 1e9, e->energy_j, e->duration_s,
           100 * (e->energy_j / top->energy_j - 1), 100 * (e->duration_s / top->duration_s - 1),
           top->frequency_hz / 1e9);
    printf("Least E·D (model estimate): %.3f GHz, %.1f J in %.3f s\n", d->frequency_hz / 1e9,
           d->energy_j, d->duration_s);
}

static void add_strings(JsonBuilder *b, const char *name, const GPtrArray *items)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; i < items->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(items, i));
    json_builder_end_array(b);
}

static void add_prediction(JsonBuilder *b, const struct vigil_fluid_prediction *p)
{
    json_builder_begin_object(b);
    vigil_json_number(b, "frequency_hz", p->frequency_hz);
    vigil_json_number(b, "duration_s", p->duration_s);
    vigil_json_number(b, "power_w", p->power_w);
    vigil_json_number(b, "energy_j", p->energy_j);
    vigil_json_number(b, "energy_delay_js", p->energy_delay_js);
    json_builder_end_object(b);
}

void advise_print_json(const struct advice *a)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "estimate",
                      "model: the Fluid model fitted to the runs, not a measurement");
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    for (int i = 0; i < a->n_runs; i++) {
        const struct run_facts *f = &a->runs[i];
        json_builder_begin_object(b);
        vigil_json_int(b, "run_id", g_ascii_strtoll(f->run_id, NULL, 10));
        vigil_json_string(b, "run_key", f->run_key);
        vigil_json_string(b, "program", f->program);
        vigil_json_number(b, "duration_s", f->duration_s);
        vigil_json_int(b, "nodes", f->nodes);
        vigil_json_number(b, "energy_j", f->energy_metric != NULL ? f->energy_j : NAN);
        vigil_json_number(b, "power_w", f->power_w);
        vigil_json_string(b, "energy_metric", f->energy_metric);
        vigil_json_bool(b, "energy_estimated", f->estimated_windows > 0);
        vigil_json_number(b, "attributed_energy_j", f->attributed_energy_j);
        vigil_json_number(b, "frequency_hz", f->frequency_hz);
        vigil_json_number(b, "frequency_min_hz", f->min_frequency_hz);
        vigil_json_number(b, "frequency_max_hz", f->max_frequency_hz);
        vigil_json_int(b, "points", f->points->len);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    add_strings(b, "notes", a->notes);
    add_strings(b, "missing", a->missing);
    json_builder_set_member_name(b, "model");
    if (a->fitted) {
        const struct vigil_fluid_model *m = &a->model;
        json_builder_begin_object(b);
        vigil_json_number(b, "frequency_max_hz", m->max_frequency_hz);
        vigil_json_number(b, "duration_at_max_s", m->duration_at_max_s);
        vigil_json_number(b, "alpha", m->alpha);
        vigil_json_number(b, "static_power_w", m->static_power_w);
        vigil_json_number(b, "dynamic_power_w", m->dynamic_power_w);
        vigil_json_number(b, "exponent", m->exponent);
        vigil_json_bool(b, "exponent_fitted", m->exponent_fitted);
        vigil_json_int(b, "distinct_frequencies", m->distinct_frequencies);
        vigil_json_int(b, "points_used", (gint64)m->points_used);
        vigil_json_number(b, "power_rms_w", m->exponent_fitted ? m->power_rms_w : NAN);
        vigil_json_string(b, "exponent_note",
                          m->exponent_note[0] != '\0' ? m->exponent_note : NULL);
        vigil_json_number(b, "frequency_step_hz", a->step_hz);
        json_builder_end_object(b);
        json_builder_set_member_name(b, "predictions");
        json_builder_begin_array(b);
        for (guint i = 0; i < a->predictions->len; i++)
            add_prediction(b, &g_array_index(a->predictions, struct vigil_fluid_prediction, i));
        json_builder_end_array(b);
        json_builder_set_member_name(b, "least_energy");
        add_prediction(
            b, &g_array_index(a->predictions, struct vigil_fluid_prediction, a->least_energy));
        json_builder_set_member_name(b, "least_energy_delay");
        add_prediction(b, &g_array_index(a->predictions, struct vigil_fluid_prediction,
                                         a->least_energy_delay));
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_end_object(b);
    char *text = vigil_json_builder_text(b, FALSE);
    printf("%s\n", text);
    g_free(text);
}
