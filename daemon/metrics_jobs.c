/* vigild — what /metrics needs across processes' lives. A job's figures
 * are counters: they must not fall when one of its processes ends, so what
 * an ended process had is kept with its job until the job's last process
 * here ends (then its series goes). The jobs past max_jobs share one
 * series, job="_other", that only ever grows: each scrape adds what they
 * gained since the one before. A job keeps the series it got first: one
 * that moved between them would be counted twice. */
#include <math.h>
#include <string.h>

#include "metrics.h"
#include "tick_samples.h"

struct metrics_job {
    char *id;
    uint64_t order; /* first seen: the oldest get series of their own */
    gboolean labelled;
    guint running;
    /* What its ended processes had. */
    double ended_energy_j, ended_read_bytes, ended_written_bytes;
    gboolean has_energy;
    /* Folded jobs: their figures at the last scrape, already in "_other". */
    double folded_energy_j, folded_read_bytes, folded_written_bytes;
};

struct metrics_process {
    struct metrics_job *job;          /* NULL: no job */
    double read_bytes, written_bytes; /* newest samples; NaN: none yet */
};

static void free_job(gpointer data)
{
    struct metrics_job *job = data;
    g_free(job->id);
    g_free(job);
}

void vigild_metrics_jobs_init(struct vigild_metrics_jobs *j, guint max_jobs)
{
    memset(j, 0, sizeof *j);
    j->jobs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_job);
    j->processes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    j->max_jobs = max_jobs;
}

void vigild_metrics_jobs_set_max(struct vigild_metrics_jobs *j, guint max_jobs)
{
    /* Jobs keep the series they have; new ones follow the new bound. */
    j->max_jobs = max_jobs;
}

void vigild_metrics_jobs_process_started(struct vigild_metrics_jobs *j, uint64_t process_id,
                                         const char *job_id)
{
    struct metrics_process *p = g_new0(struct metrics_process, 1);
    p->read_bytes = p->written_bytes = NAN;
    if (job_id != NULL && job_id[0] != '\0') {
        struct metrics_job *job = g_hash_table_lookup(j->jobs, job_id);
        if (job == NULL) {
            job = g_new0(struct metrics_job, 1);
            job->id = g_strdup(job_id);
            job->order = j->next_order++;
            job->labelled = j->labelled < j->max_jobs;
            j->labelled += job->labelled;
            g_hash_table_insert(j->jobs, job->id, job);
        }
        job->running++;
        p->job = job;
    }
    uint64_t *key = g_new(uint64_t, 1);
    *key = process_id;
    g_hash_table_replace(j->processes, key, p);
}

static double value_or_zero(double value)
{
    return isnan(value) ? 0 : value;
}

/* A folded job's gain since the last scrape, into "_other". */
static void fold(struct vigild_metrics_jobs *j, struct metrics_job *job, double energy_j,
                 double read_bytes, double written_bytes)
{
    if (energy_j > job->folded_energy_j) {
        j->other_energy_j += energy_j - job->folded_energy_j;
        job->folded_energy_j = energy_j;
    }
    if (read_bytes > job->folded_read_bytes) {
        j->other_read_bytes += read_bytes - job->folded_read_bytes;
        job->folded_read_bytes = read_bytes;
    }
    if (written_bytes > job->folded_written_bytes) {
        j->other_written_bytes += written_bytes - job->folded_written_bytes;
        job->folded_written_bytes = written_bytes;
    }
}

void vigild_metrics_jobs_process_ended(struct vigild_metrics_jobs *j, uint64_t process_id,
                                       double energy_j, uint64_t ring_dropped)
{
    j->ended_ring_dropped += ring_dropped;
    struct metrics_process *p = g_hash_table_lookup(j->processes, &process_id);
    if (p == NULL)
        return;
    struct metrics_job *job = p->job;
    if (job != NULL) {
        if (!isnan(energy_j)) {
            job->ended_energy_j += energy_j;
            job->has_energy = TRUE;
        }
        job->ended_read_bytes += value_or_zero(p->read_bytes);
        job->ended_written_bytes += value_or_zero(p->written_bytes);
        if (--job->running == 0) {
            if (!job->labelled)
                fold(j, job, job->ended_energy_j, job->ended_read_bytes, job->ended_written_bytes);
            j->labelled -= job->labelled;
            g_hash_table_remove(j->jobs, job->id);
        }
    }
    g_hash_table_remove(j->processes, &process_id);
}

static uint32_t metric_id(const vigil_metric_catalog *catalog, const char *name)
{
    const struct vigil_metric_desc *m = vigil_metric_lookup(catalog, name);
    return m != NULL ? m->id : 0;
}

void vigild_metrics_jobs_samples(void *jobs, const struct vigild_tick_samples *samples,
                                 const vigil_metric_catalog *catalog)
{
    struct vigild_metrics_jobs *j = jobs;
    if (j->read_metric_id == 0)
        j->read_metric_id = metric_id(catalog, "process.read_bytes");
    if (j->written_metric_id == 0)
        j->written_metric_id = metric_id(catalog, "process.written_bytes");
    if (j->read_metric_id == 0 && j->written_metric_id == 0)
        return;
    for (guint i = 0; i < samples->process->len; i++) {
        const struct vigild_process_sample *s =
            &g_array_index(samples->process, struct vigild_process_sample, i);
        if (s->sample.metric_id != j->read_metric_id && s->sample.metric_id != j->written_metric_id)
            continue;
        struct metrics_process *p = g_hash_table_lookup(j->processes, &s->process_id);
        if (p == NULL || p->job == NULL)
            continue;
        if (s->sample.metric_id == j->read_metric_id)
            p->read_bytes = s->sample.value;
        else
            p->written_bytes = s->sample.value;
    }
}

static gint by_order(gconstpointer a, gconstpointer b)
{
    const struct metrics_job *x = *(struct metrics_job *const *)a;
    const struct metrics_job *y = *(struct metrics_job *const *)b;
    return x->order < y->order ? -1 : x->order > y->order;
}

void vigild_metrics_jobs_collect(struct vigild_metrics_jobs *j,
                                 double (*energy_of)(void *user, uint64_t process_id), void *user,
                                 GArray *out, guint *running, guint *folded)
{
    /* Each job's running processes' figures on top of its ended ones'. */
    GHashTable *figures = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, j->processes);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const struct metrics_process *p = value;
        if (p->job == NULL)
            continue;
        struct vigild_metrics_job *f = g_hash_table_lookup(figures, p->job);
        if (f == NULL) {
            f = g_new0(struct vigild_metrics_job, 1);
            f->energy_j = p->job->has_energy ? p->job->ended_energy_j : NAN;
            f->read_bytes = p->job->ended_read_bytes;
            f->written_bytes = p->job->ended_written_bytes;
            g_hash_table_insert(figures, p->job, f);
        }
        double energy_j = energy_of(user, *(const uint64_t *)key);
        if (!isnan(energy_j))
            f->energy_j = value_or_zero(f->energy_j) + energy_j;
        f->read_bytes += value_or_zero(p->read_bytes);
        f->written_bytes += value_or_zero(p->written_bytes);
        f->processes++;
    }
    GPtrArray *ordered = g_ptr_array_sized_new(g_hash_table_size(j->jobs));
    g_hash_table_iter_init(&it, j->jobs);
    while (g_hash_table_iter_next(&it, NULL, &value))
        g_ptr_array_add(ordered, value);
    g_ptr_array_sort(ordered, by_order);
    *running = ordered->len;
    *folded = 0;
    for (guint i = 0; i < ordered->len; i++) {
        struct metrics_job *job = g_ptr_array_index(ordered, i);
        const struct vigild_metrics_job *f = g_hash_table_lookup(figures, job);
        if (f == NULL)
            continue;
        if (!job->labelled) {
            (*folded)++;
            fold(j, job, value_or_zero(f->energy_j), f->read_bytes, f->written_bytes);
            continue;
        }
        g_array_set_size(out, out->len + 1);
        struct vigild_metrics_job *row =
            &g_array_index(out, struct vigild_metrics_job, out->len - 1);
        *row = *f;
        row->job = g_strdup(job->id);
    }
    /* Once a job was folded, "_other" stays: its counters go on. */
    if (j->next_order > 0 && (*folded > 0 || j->other_energy_j > 0 || j->other_read_bytes > 0 ||
                              j->other_written_bytes > 0)) {
        struct vigild_metrics_job other = {
            .job = g_strdup(VIGILD_METRICS_OTHER_JOBS),
            .energy_j = j->other_energy_j,
            .read_bytes = j->other_read_bytes,
            .written_bytes = j->other_written_bytes,
            .processes = 0,
        };
        for (guint i = 0; i < ordered->len; i++) {
            const struct metrics_job *job = g_ptr_array_index(ordered, i);
            if (!job->labelled)
                other.processes += job->running;
        }
        g_array_append_val(out, other);
    }
    g_ptr_array_free(ordered, TRUE);
    g_hash_table_destroy(figures);
}

void vigild_metrics_jobs_clear(struct vigild_metrics_jobs *j)
{
    if (j->processes != NULL)
        g_hash_table_destroy(j->processes);
    if (j->jobs != NULL)
        g_hash_table_destroy(j->jobs);
    memset(j, 0, sizeof *j);
}
