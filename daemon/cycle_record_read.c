/* vigild — reading a cycle recording (cycle_record.h): every record's frame
 * and checksum checked, every field bounded, and each problem named with
 * the offset where it is, since a recording may be cut short by a full
 * disk or a killed daemon, or damaged on its way to the admin's machine. */
#include <string.h>
#include <zlib.h>

#include "cycle_record.h"

static const char *const type_names[VIGILD_RECORD_TYPE_MAX + 1] = {
#define TYPE_NAME(name, number) [number] = #name,
    VIGILD_RECORD_TYPES(TYPE_NAME)
#undef TYPE_NAME
};

const char *vigild_record_type_name(unsigned type)
{
    return type >= 1 && type <= VIGILD_RECORD_TYPE_MAX ? type_names[type] : NULL;
}

gboolean vigild_record_section_kept(const char *section)
{
    return strcmp(section, "daemon") == 0 || strcmp(section, "capture") == 0 ||
           g_str_has_prefix(section, "reasoner.") || g_str_has_prefix(section, "adpi.");
}

char *vigild_record_config_text(const vigil_config *config)
{
    char *all = vigil_config_to_string(config);
    GString *out = g_string_new(NULL);
    gboolean keep = FALSE;
    char **lines = g_strsplit(all, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        if ((*line)[0] == '[') {
            char *section = g_strndup(*line + 1, strcspn(*line + 1, "]"));
            keep = vigild_record_section_kept(section);
            g_free(section);
        }
        if (keep && (*line)[0] != '#' && (*line)[0] != '\0')
            g_string_append_printf(out, "%s\n", *line);
    }
    g_strfreev(lines);
    g_free(all);
    return g_string_free(out, FALSE);
}

static uint32_t le32(const guint8 *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

gboolean vigild_record_reader_open(struct vigild_record_reader *r, const char *path, GError **error)
{
    memset(r, 0, sizeof *r);
    GError *io = NULL;
    if (!g_file_get_contents(path, (char **)&r->data, &r->size, &io)) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_IO, "%s", io->message);
        g_error_free(io);
        return FALSE;
    }
    r->path = g_strdup(path);
    if (r->size < VIGILD_RECORD_HEADER_BYTES || memcmp(r->data, VIGILD_RECORD_MAGIC, 8) != 0) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_FORMAT,
                    "%s: not a vigild recording (no %s header at offset 0)", path,
                    VIGILD_RECORD_MAGIC);
        vigild_record_reader_clear(r);
        return FALSE;
    }
    uint32_t version = le32(r->data + 8);
    if (version < VIGILD_RECORD_VERSION_OLDEST || version > VIGILD_RECORD_VERSION) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_FORMAT,
                    "%s: recording format version %u at offset 8; this vigil reads versions %u "
                    "to %u",
                    path, version, VIGILD_RECORD_VERSION_OLDEST, VIGILD_RECORD_VERSION);
        vigild_record_reader_clear(r);
        return FALSE;
    }
    r->version = version;
    r->offset = VIGILD_RECORD_HEADER_BYTES;
    return TRUE;
}

void vigild_record_reader_clear(struct vigild_record_reader *r)
{
    g_free(r->data);
    g_free(r->path);
    memset(r, 0, sizeof *r);
}

gboolean vigild_record_next(struct vigild_record_reader *r, struct vigild_record_payload *out,
                            GError **error)
{
    gsize at = r->offset, left = r->size - at;
    if (left == 0)
        return FALSE;
    if (left < 5) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_TRUNCATED,
                    "%s: truncated at offset %" G_GSIZE_FORMAT ": a record's type and length "
                    "need 5 bytes, %" G_GSIZE_FORMAT " are left",
                    r->path, at, left);
        return FALSE;
    }
    unsigned type = r->data[at];
    uint32_t length = le32(r->data + at + 1);
    if (vigild_record_type_name(type) == NULL) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "%s: corrupt at offset %" G_GSIZE_FORMAT ": unknown record type %u", r->path,
                    at, type);
        return FALSE;
    }
    if (length > VIGILD_RECORD_PAYLOAD_MAX) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "%s: corrupt at offset %" G_GSIZE_FORMAT ": a %s record of %u bytes, more "
                    "than the %u a record may have",
                    r->path, at, type_names[type], length, VIGILD_RECORD_PAYLOAD_MAX);
        return FALSE;
    }
    if ((gsize)length + VIGILD_RECORD_FRAME_BYTES > left) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_TRUNCATED,
                    "%s: truncated at offset %" G_GSIZE_FORMAT
                    ": its %s record needs %" G_GSIZE_FORMAT " bytes, %" G_GSIZE_FORMAT " are left",
                    r->path, at, type_names[type], (gsize)length + VIGILD_RECORD_FRAME_BYTES, left);
        return FALSE;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, r->data + at, 5 + length);
    uint32_t stored = le32(r->data + at + 5 + length);
    if ((uint32_t)crc != stored) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "%s: corrupt at offset %" G_GSIZE_FORMAT ": the %s record's checksum is "
                    "%08x, its bytes give %08x",
                    r->path, at, type_names[type], stored, (uint32_t)crc);
        return FALSE;
    }
    *out = (struct vigild_record_payload){
        .type = type,
        .version = r->version,
        .offset = at,
        .data = r->data + at + 5,
        .size = length,
    };
    r->offset = at + VIGILD_RECORD_FRAME_BYTES + length;
    return TRUE;
}

static gboolean payload_fail(struct vigild_record_payload *p, const char *what)
{
    if (!p->bad)
        p->bad_what = what;
    p->bad = TRUE;
    return FALSE;
}

uint64_t vigild_payload_u64(struct vigild_record_payload *p, const char *what)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (p->bad || p->at >= p->size)
            return payload_fail(p, what);
        guint8 byte = p->data[p->at++];
        v |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0)
            return v;
    }
    return payload_fail(p, what);
}

int64_t vigild_payload_i64(struct vigild_record_payload *p, const char *what)
{
    uint64_t z = vigild_payload_u64(p, what);
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

guint8 vigild_payload_u8(struct vigild_record_payload *p, const char *what)
{
    if (p->bad || p->at >= p->size)
        return (guint8)payload_fail(p, what);
    return p->data[p->at++];
}

double vigild_payload_double(struct vigild_record_payload *p, const char *what)
{
    if (p->bad || p->size - p->at < 8) {
        payload_fail(p, what);
        return 0;
    }
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)p->data[p->at + i] << (8 * i);
    p->at += 8;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

char *vigild_payload_string(struct vigild_record_payload *p, const char *what)
{
    uint64_t n = vigild_payload_u64(p, what);
    if (p->bad || n > p->size - p->at) {
        payload_fail(p, what);
        return g_strdup("");
    }
    char *s = g_strndup((const char *)p->data + p->at, n);
    p->at += n;
    return s;
}

gboolean vigild_payload_done(struct vigild_record_payload *p, GError **error)
{
    if (p->bad) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "corrupt at offset %" G_GSIZE_FORMAT ": the %s record's %s is cut short or "
                    "out of range",
                    p->offset, vigild_record_type_name(p->type), p->bad_what);
        return FALSE;
    }
    if (p->at != p->size) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "corrupt at offset %" G_GSIZE_FORMAT ": the %s record has %" G_GSIZE_FORMAT
                    " bytes after its last field",
                    p->offset, vigild_record_type_name(p->type), p->size - p->at);
        return FALSE;
    }
    return TRUE;
}

uint64_t vigild_payload_activities(struct vigild_record_payload *p, GArray *out)
{
    uint64_t process_id = vigild_payload_u64(p, "process id");
    uint64_t n = vigild_payload_u64(p, "activity count");
    /* Each activity takes 14 bytes at least: a count beyond that is bad. */
    if (n > (p->size - MIN(p->at, p->size)) / 14) {
        payload_fail(p, "activity count");
        return process_id;
    }
    uint64_t seq = 0, start_ns = 0;
    for (uint64_t i = 0; i < n && !p->bad; i++) {
        struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY};
        a.layer = vigild_payload_u8(p, "activity layer");
        a.op = (uint16_t)vigild_payload_u64(p, "activity op");
        a.file_id = (uint32_t)vigild_payload_u64(p, "activity file");
        seq += (uint64_t)vigild_payload_i64(p, "activity seq");
        start_ns += (uint64_t)vigild_payload_i64(p, "activity start");
        a.seq = seq;
        a.start_ns = start_ns;
        a.end_ns = start_ns + (uint64_t)vigild_payload_i64(p, "activity duration");
        int64_t parent = vigild_payload_i64(p, "activity parent");
        a.parent_start_ns = parent == 0 ? 0 : start_ns - (uint64_t)(parent - 1);
        a.offset_bytes = vigild_payload_i64(p, "activity offset");
        a.bytes_asked = vigild_payload_u64(p, "activity bytes");
        a.result = vigild_payload_i64(p, "activity result");
        a.errno_value = (int32_t)vigild_payload_i64(p, "activity errno");
        a.thread_id = (uint32_t)vigild_payload_u64(p, "activity thread");
        a.flags = (uint32_t)vigild_payload_u64(p, "activity flags");
        a.comm_size = (uint32_t)vigild_payload_u64(p, "activity comm size");
        g_array_append_val(out, a);
    }
    return process_id;
}
