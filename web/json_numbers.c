/* vigil-web — doubles as json-glib writes them, without printf (see
 * json_numbers.h). A double is m × 2^e exactly (m < 2^53), so its 17
 * significant digits are m × 2^e × 10^s rounded to an integer, with s
 * chosen to give 17 of them: one 128-bit division, rounded half to even
 * as glibc's printf does. Doubles whose m × 2^e × 10^s does not fit 128
 * bits (below about 1e-20, above about 1e21) go to g_ascii_dtostr. */
#include <math.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "json_numbers.h"

typedef unsigned __int128 u128;

#define DIGITS 17

static const guint64 POW10_U64[20] = {1ULL,
                                      10ULL,
                                      100ULL,
                                      1000ULL,
                                      10000ULL,
                                      100000ULL,
                                      1000000ULL,
                                      10000000ULL,
                                      100000000ULL,
                                      1000000000ULL,
                                      10000000000ULL,
                                      100000000000ULL,
                                      1000000000000ULL,
                                      10000000000000ULL,
                                      100000000000000ULL,
                                      1000000000000000ULL,
                                      10000000000000000ULL,
                                      100000000000000000ULL,
                                      1000000000000000000ULL,
                                      10000000000000000000ULL};

/* 10^s for s in 0 … 38 (10^38 < 2^127). */
static u128 pow10_u128(int s)
{
    if (s < 20)
        return POW10_U64[s];
    u128 p = POW10_U64[19];
    for (int i = 19; i < s; i++)
        p *= 10;
    return p;
}

/* The bits of `x` (0 for 0). */
static int bits_of(u128 x)
{
    guint64 high = (guint64)(x >> 64), low = (guint64)x;
    if (high != 0)
        return 128 - __builtin_clzll(high);
    return low != 0 ? 64 - __builtin_clzll(low) : 0;
}

/* round(a × 2^e × 10^s) (a > 0), half to even; FALSE when it would not
 * fit 128 bits. */
static gboolean scaled(guint64 m, int e, int s, u128 *out)
{
    u128 num = m, den = 1;
    int num_bits = bits_of(num);
    if (s >= 0) {
        if (s > 38 || num_bits + bits_of(pow10_u128(s)) > 126)
            return FALSE;
        num *= pow10_u128(s);
    } else {
        if (-s > 38)
            return FALSE;
        den = pow10_u128(-s);
    }
    if (e >= 0) {
        if (bits_of(num) + e > 126)
            return FALSE;
        num <<= e;
    } else {
        if (bits_of(den) - e > 126)
            return FALSE;
        den <<= -e;
    }
    u128 q, r;
    if (s >= 0) { /* den is 2^-e: a shift, the common case (below 1e17) */
        int shift = e < 0 ? -e : 0;
        q = num >> shift;
        r = num & (den - 1);
    } else {
        q = num / den;
        r = num % den;
    }
    if (2 * r > den || (2 * r == den && (q & 1) != 0))
        q++;
    *out = q;
    return TRUE;
}

/* The 17 significant digits of `a` (> 0) and its decimal exponent X
 * (a ≈ d.dddd × 10^X): FALSE when out of range. */
static gboolean digits_of(double a, char digits[DIGITS], int *exponent)
{
    int e2 = 0;
    double f = frexp(a, &e2); /* a = f × 2^e2, f in [0.5, 1) */
    guint64 m = (guint64)ldexp(f, 53);
    int e = e2 - 53;
    int x = (int)floor(log10(a));
    const u128 low = POW10_U64[DIGITS - 1], high = POW10_U64[DIGITS];
    for (int tries = 0; tries < 3; tries++) {
        u128 scaled_d;
        if (!scaled(m, e, DIGITS - 1 - x, &scaled_d))
            return FALSE;
        u128 d = scaled_d;
        if (d >= high) { /* log10 guessed low, or rounding carried into a digit more */
            x++;
            continue;
        }
        if (d < low) {
            x--;
            continue;
        }
        guint64 d64 = (guint64)d; /* < 10^17: 64-bit divisions by 10 are cheap */
        for (int i = DIGITS - 1; i >= 0; i--) {
            digits[i] = (char)('0' + (int)(d64 % 10));
            d64 /= 10;
        }
        *exponent = x;
        return TRUE;
    }
    return FALSE;
}

/* printf's "%.17g" of a finite, non-zero double. */
static gboolean format_g17(double v, char *out)
{
    char digits[DIGITS];
    int x = 0;
    if (!digits_of(fabs(v), digits, &x))
        return FALSE;
    int n = DIGITS; /* trailing zeros are not written */
    while (n > 1 && digits[n - 1] == '0')
        n--;
    char *p = out;
    if (v < 0)
        *p++ = '-';
    if (x < -4 || x >= DIGITS) {
        *p++ = digits[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)n - 1);
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = ABS(x);
        if (ax >= 100)
            *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    } else if (x >= 0) {
        for (int i = 0; i <= x; i++)
            *p++ = i < n ? digits[i] : '0';
        if (n > x + 1) {
            *p++ = '.';
            memcpy(p, digits + x + 1, (size_t)(n - x - 1));
            p += n - x - 1;
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *p++ = '0';
        memcpy(p, digits, (size_t)n);
        p += n;
    }
    *p = '\0';
    return TRUE;
}

void web_json_append_double(GString *out, double v)
{
    if (!isfinite(v)) {
        g_string_append(out, "null");
        return;
    }
    char text[G_ASCII_DTOSTR_BUF_SIZE + 2];
    if (v == 0 || !format_g17(v, text))
        g_ascii_dtostr(text, G_ASCII_DTOSTR_BUF_SIZE, v);
    g_string_append(out, text);
    /* json-glib's mark of a double; not after an exponent (json-glib
     * writes 1e+20.0 there, which is no JSON). */
    if (strchr(text, '.') == NULL && strchr(text, 'e') == NULL)
        g_string_append(out, ".0");
}

void web_json_append_numbers(GString *out, const double *v, guint n)
{
    g_string_append_c(out, '[');
    for (guint i = 0; i < n; i++) {
        if (i > 0)
            g_string_append_c(out, ',');
        web_json_append_double(out, v[i]);
    }
    g_string_append_c(out, ']');
}

void web_json_append_string(GString *out, const char *text)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);
    json_node_set_string(node, text);
    char *quoted = json_to_string(node, FALSE);
    g_string_append(out, quoted);
    g_free(quoted);
    json_node_unref(node);
}
