#include "pm_api/bulk.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bulk arrays store doubles in host order, which the cache key takes as little-endian"
#endif

const char pm_api_bulk_tag[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', '1'};
const char pm_api_bulk_tag_f32[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', 'f'};
/* A reference (pm_api_bulk_f32_ref): the tag, then the values' address
 * and count, 8 bytes each. */
static const char pm_api__bulk_tag_ref[PM_API_BULK_TAG_LEN] = {'\xff', 'p', 'm', 'b', 'u', 'l', 'k', 'r'};
#define PM_API__REF_LEN (PM_API_BULK_TAG_LEN + 2 * sizeof(uint64_t))

/* Bytes per value of j, or 0 when j is no bulk array. */
static size_t pm_api__bulk_esize(const json_t *j) {
    if (!json_is_string(j)) return 0;
    size_t len = json_string_length(j);
    const char *s = json_string_value(j);
    if (len < PM_API_BULK_TAG_LEN) return 0;
    if (memcmp(s, pm_api__bulk_tag_ref, PM_API_BULK_TAG_LEN) == 0)
        return len == PM_API__REF_LEN ? sizeof(float) : 0;
    size_t e = memcmp(s, pm_api_bulk_tag, PM_API_BULK_TAG_LEN) == 0       ? sizeof(double)
               : memcmp(s, pm_api_bulk_tag_f32, PM_API_BULK_TAG_LEN) == 0 ? sizeof(float)
                                                                           : 0;
    return e && (len - PM_API_BULK_TAG_LEN) % e == 0 ? e : 0;
}

json_t *pm_api_bulk_adopt_f32(char *buf, size_t n) {
    memcpy(buf, pm_api_bulk_tag_f32, PM_API_BULK_TAG_LEN);
    return json_stringn_nocheck(buf, PM_API_BULK_TAG_LEN + n * sizeof(float));
}

json_t *pm_api_bulk_f32_ref(const void *data, size_t n) {
    char buf[PM_API__REF_LEN];
    uint64_t at = (uint64_t)(uintptr_t)data, count = n;
    memcpy(buf, pm_api__bulk_tag_ref, PM_API_BULK_TAG_LEN);
    memcpy(buf + PM_API_BULK_TAG_LEN, &at, sizeof at);
    memcpy(buf + PM_API_BULK_TAG_LEN + sizeof at, &count, sizeof count);
    return json_stringn_nocheck(buf, sizeof buf);
}

bool pm_api_bulk_is_ref(const json_t *j) {
    return pm_api__bulk_esize(j) != 0 &&
           memcmp(json_string_value(j), pm_api__bulk_tag_ref, PM_API_BULK_TAG_LEN) == 0;
}

json_t *pm_api_bulk_adopt(char *buf, size_t n) {
    memcpy(buf, pm_api_bulk_tag, PM_API_BULK_TAG_LEN);
    return json_stringn_nocheck(buf, PM_API_BULK_TAG_LEN + n * sizeof(double));
}

json_t *pm_api_bulk_new(const double *v, size_t n) {
    char *buf = malloc(PM_API_BULK_TAG_LEN + n * sizeof(double));
    if (!buf) return NULL;
    if (n) memcpy(buf + PM_API_BULK_TAG_LEN, v, n * sizeof(double));
    json_t *j = pm_api_bulk_adopt(buf, n);
    free(buf);
    return j;
}

bool pm_api_bulk_is(const json_t *j) { return pm_api__bulk_esize(j) != 0; }

bool pm_api_bulk_is_f32(const json_t *j) { return pm_api__bulk_esize(j) == sizeof(float); }

size_t pm_api_bulk_len(const json_t *j) {
    size_t e = pm_api__bulk_esize(j);
    if (!e) return 0;
    if (pm_api_bulk_is_ref(j)) {
        uint64_t n;
        memcpy(&n, json_string_value(j) + PM_API_BULK_TAG_LEN + sizeof(uint64_t), sizeof n);
        return (size_t)n;
    }
    return (json_string_length(j) - PM_API_BULK_TAG_LEN) / e;
}

/* Vector kernels, built for AVX2 and for the baseline, picked once at
 * load (ifunc): a heightfield of 10^6 values is then converted and checked
 * at about the speed of copying it. GCC and clang vector extensions. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PM_API__CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PM_API__CLONES
#endif

typedef float pm_api__v4f __attribute__((vector_size(16)));
typedef double pm_api__v4d __attribute__((vector_size(32)));
typedef long long pm_api__v4l __attribute__((vector_size(32)));

/* n float32 values at in (unaligned) as doubles into out. */
static void pm_api__f32_get_base(const unsigned char *in, size_t n, double *out) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        pm_api__v4f f;
        memcpy(&f, in + i * sizeof(float), sizeof f);
        pm_api__v4d x = __builtin_convertvector(f, pm_api__v4d);
        memcpy(out + i, &x, sizeof x);
    }
    for (; i < n; i++) {
        float f;
        memcpy(&f, in + i * sizeof f, sizeof f);
        out[i] = f;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* The same with AVX (vcvtps2pd straight to 256 bits: GCC's vector lowering
 * of the conversion above splits it in halves). */
__attribute__((target("avx"))) static void pm_api__f32_get_avx(const unsigned char *in, size_t n,
                                                                double *out) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d x = _mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)(in + i * 4)));
        __m256d y = _mm256_cvtps_pd(_mm_loadu_ps((const float *)(const void *)(in + i * 4 + 16)));
        _mm256_storeu_pd(out + i, x);
        _mm256_storeu_pd(out + i + 4, y);
    }
    pm_api__f32_get_base(in + i * sizeof(float), n - i, out + i);
}

static void pm_api__f32_get(const unsigned char *in, size_t n, double *out) {
    static int avx = -1;   /* racy first use is harmless: every thread finds the same */
    if (avx < 0) avx = __builtin_cpu_supports("avx") ? 1 : 0;
    if (avx) pm_api__f32_get_avx(in, n, out);
    else pm_api__f32_get_base(in, n, out);
}
#else
#define pm_api__f32_get pm_api__f32_get_base
#endif

/* The float32 bounds equivalent to the double bounds [lo, hi]: a float32
 * f is within [lo, hi] exactly when it is within [*flo, *fhi] (lo rounded
 * up to a float32, hi rounded down; infinities never, as lo and hi are
 * finite). */
static void pm_api__f32_bounds(double lo, double hi, float *flo, float *fhi) {
    float l = (float)lo, h = (float)hi;
    if ((double)l < lo) l = nextafterf(l, HUGE_VALF);
    if ((double)h > hi) h = nextafterf(h, -HUGE_VALF);
    *flo = l;
    *fhi = h;
}

/* n float32 values at in copied into out as they are (-0 made 0: x + 0
 * is +0 for both zeros and x for every other x) and checked against
 * [lo, hi] (pm_api_bulk_get_checked's answer but for -0, which nothing
 * needs to know here), as float32 against the bounds pm_api__f32_bounds
 * gives: eight values per step with no conversion, in is only read. */
PM_API__CLONES static unsigned pm_api__f32_checked_f32(const unsigned char *in, size_t n,
                                                       double lo, double hi, float *out) {
    typedef float v8f __attribute__((vector_size(32)));
    typedef int32_t v8i __attribute__((vector_size(32)));
    float fl, fh;
    pm_api__f32_bounds(lo, hi, &fl, &fh);
    const v8f vlo = {fl, fl, fl, fl, fl, fl, fl, fl}, vhi = {fh, fh, fh, fh, fh, fh, fh, fh};
    const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
    v8i ok = ~(v8i){0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v8f x, y;
        memcpy(&x, in + i * sizeof(float), sizeof x);
        memcpy(&y, in + (i + 8) * sizeof(float), sizeof y);
        ok &= (x >= vlo) & (x <= vhi) & (y >= vlo) & (y <= vhi);
        x += zero;
        y += zero;
        memcpy(out + i, &x, sizeof x);
        memcpy(out + i + 8, &y, sizeof y);
    }
    int32_t all = -1;
    for (int k = 0; k < 8; k++) all &= ok[k];
    bool good = all == -1;
    for (; i < n; i++) {
        float f;
        memcpy(&f, in + i * sizeof f, sizeof f);
        good &= f >= fl && f <= fh;
        out[i] = f + 0.0f;
    }
    return good ? PM_API_BULK_IN_RANGE : 0u;
}

/* Whether each of the n doubles at in is exactly a float32 (in blocks,
 * stopping at the first block with one that is not: most arrays of
 * decimals fail in their first values). */
static bool pm_api__f64_f32_exact_base(const unsigned char *in, size_t n) {
    typedef float v4f __attribute__((vector_size(16)));
    size_t i = 0;
    while (i + 4 <= n) {
        pm_api__v4l ok = {-1, -1, -1, -1};
        size_t end = n - i > 512 ? i + 512 : n;
        for (; i + 4 <= end; i += 4) {
            pm_api__v4d x;
            memcpy(&x, in + i * sizeof(double), sizeof x);
            pm_api__v4d back = __builtin_convertvector(__builtin_convertvector(x, v4f), pm_api__v4d);
            ok &= back == x;
        }
        if ((ok[0] & ok[1] & ok[2] & ok[3]) != -1) return false;
    }
    for (; i < n; i++) {
        double x;
        memcpy(&x, in + i * sizeof x, sizeof x);
        if (!(isinf(x) || (fabs(x) <= FLT_MAX && (double)(float)x == x))) return false;
    }
    return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same with AVX: vcvtpd2ps and vcvtps2pd on whole registers (GCC's
 * lowering of the vector conversion above splits the widening in halves). */
__attribute__((target("avx"))) static bool pm_api__f64_f32_exact_avx(const unsigned char *in,
                                                                     size_t n) {
    size_t i = 0;
    while (i + 8 <= n) {
        __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
        size_t end = n - i > 512 ? i + 512 : n;
        for (; i + 8 <= end; i += 8) {
            __m256d x = _mm256_loadu_pd((const double *)(const void *)(in + i * 8));
            __m256d y = _mm256_loadu_pd((const double *)(const void *)(in + i * 8 + 32));
            __m256d bx = _mm256_cvtps_pd(_mm256_cvtpd_ps(x)), by = _mm256_cvtps_pd(_mm256_cvtpd_ps(y));
            ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(bx, x, _CMP_EQ_OQ),
                                                 _mm256_cmp_pd(by, y, _CMP_EQ_OQ)));
        }
        if (_mm256_movemask_pd(ok) != 0xf) return false;
    }
    return pm_api__f64_f32_exact_base(in + i * sizeof(double), n - i);
}

static bool pm_api__f64_f32_exact(const unsigned char *in, size_t n) {
    static int avx = -1;   /* racy first use is harmless: every thread finds the same */
    if (avx < 0) avx = __builtin_cpu_supports("avx") ? 1 : 0;
    return avx ? pm_api__f64_f32_exact_avx(in, n) : pm_api__f64_f32_exact_base(in, n);
}
#else
#define pm_api__f64_f32_exact pm_api__f64_f32_exact_base
#endif

/* n doubles at in, each exactly a float32, as float32 into out. */
PM_API__CLONES static void pm_api__f64_to_f32(const unsigned char *in, size_t n, float *out) {
    typedef float v4f __attribute__((vector_size(16)));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        pm_api__v4d x;
        memcpy(&x, in + i * sizeof(double), sizeof x);
        v4f f = __builtin_convertvector(x, v4f);
        memcpy(out + i, &f, sizeof f);
    }
    for (; i < n; i++) {
        double x;
        memcpy(&x, in + i * sizeof x, sizeof x);
        out[i] = (float)x;
    }
}

/* n doubles at in into out, -0 made 0, checked against [lo, hi] in the
 * same pass (x >= lo && x <= hi fails for NaN, and for infinities when the
 * bounds are finite); in and out may be the same. Branch-free. */
PM_API__CLONES static unsigned pm_api__f64_checked(const unsigned char *in, size_t n, double lo,
                                                   double hi, double *out) {
    const pm_api__v4d vlo = {lo, lo, lo, lo}, vhi = {hi, hi, hi, hi}, zero = {0, 0, 0, 0};
    const pm_api__v4l sign = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
    pm_api__v4l ok = {-1, -1, -1, -1}, neg0 = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        pm_api__v4l u, v;
        memcpy(&u, in + i * sizeof(double), sizeof u);
        memcpy(&v, in + (i + 4) * sizeof(double), sizeof v);
        neg0 |= (u == sign) | (v == sign);
        pm_api__v4d x = (pm_api__v4d)u, y = (pm_api__v4d)v;
        ok &= (x >= vlo) & (x <= vhi) & (y >= vlo) & (y <= vhi);
        x += zero;
        y += zero;
        memcpy(out + i, &x, sizeof x);
        memcpy(out + i + 4, &y, sizeof y);
    }
    bool good = (ok[0] & ok[1] & ok[2] & ok[3]) == -1;
    bool any0 = (neg0[0] | neg0[1] | neg0[2] | neg0[3]) != 0;
    for (; i < n; i++) {
        double x;
        memcpy(&x, in + i * sizeof x, sizeof x);
        good &= x >= lo && x <= hi;
        any0 |= x == 0 && signbit(x);
        out[i] = x + 0.0;
    }
    return (good ? PM_API_BULK_IN_RANGE : 0u) | (any0 ? PM_API_BULK_NEG_ZERO : 0u);
}

/* -0 made 0 in place in n float32 values (as unsigned words) at d. */
PM_API__CLONES static void pm_api__f32_zero_neg0(unsigned char *d, size_t n) {
    typedef uint32_t v8u __attribute__((vector_size(32)));
    const v8u sign = {0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u,
                      0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8u u;
        memcpy(&u, d + i * sizeof(float), sizeof u);
        u &= ~(v8u)(u == sign);
        memcpy(d + i * sizeof(float), &u, sizeof u);
    }
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, d + i * sizeof u, sizeof u);
        if (u == 0x80000000u) memset(d + i * sizeof u, 0, sizeof u);
    }
}

void pm_api_bulk_zero_neg0(const json_t *j) {
    assert(!pm_api_bulk_is_ref(j));   /* the values are someone else's */
    size_t n = pm_api_bulk_len(j);
    unsigned char *d = (unsigned char *)(uintptr_t)pm_api_bulk_data(j);
    if (pm_api_bulk_is_f32(j)) {
        pm_api__f32_zero_neg0(d, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {   /* the readers of text make -0 0 already */
        uint64_t u;
        memcpy(&u, d + i * sizeof u, sizeof u);
        if (u == 0x8000000000000000u) memset(d + i * sizeof u, 0, sizeof u);
    }
}

bool pm_api_bulk_f32_exact(const json_t *j) {
    return pm_api_bulk_is_f32(j) || pm_api__f64_f32_exact(pm_api_bulk_data(j), pm_api_bulk_len(j));
}

void pm_api_bulk_get_f32(const json_t *j, size_t first, size_t n, float *out) {
    const unsigned char *d = pm_api_bulk_data(j);
    if (pm_api_bulk_is_f32(j)) memcpy(out, d + first * sizeof(float), n * sizeof(float));
    else pm_api__f64_to_f32(d + first * sizeof(double), n, out);
}

void pm_api_bulk_get(const json_t *j, size_t first, size_t n, double *out) {
    const unsigned char *d = pm_api_bulk_data(j);
    if (pm_api_bulk_is_f32(j)) pm_api__f32_get(d + first * sizeof(float), n, out);
    else memcpy(out, d + first * sizeof(double), n * sizeof(double));
}

unsigned pm_api_bulk_f32_checked(const json_t *j, double lo, double hi, float *out) {
    return pm_api__f32_checked_f32(pm_api_bulk_data(j), pm_api_bulk_len(j), lo, hi, out);
}

unsigned pm_api_bulk_get_checked(const json_t *j, size_t first, size_t n, double lo, double hi,
                                 double *out) {
    const unsigned char *d = pm_api_bulk_data(j);
    if (!pm_api_bulk_is_f32(j)) return pm_api__f64_checked(d + first * sizeof(double), n, lo, hi, out);
    /* Converted in blocks that stay in cache, then checked in place. */
    unsigned all = PM_API_BULK_IN_RANGE, any = 0;
    for (size_t i = 0; i < n; i += 1024) {
        size_t k = n - i < 1024 ? n - i : 1024;
        pm_api__f32_get(d + (first + i) * sizeof(float), k, out + i);
        unsigned got = pm_api__f64_checked((const unsigned char *)(out + i), k, lo, hi, out + i);
        all &= got;
        any |= got;
    }
    return (all & PM_API_BULK_IN_RANGE) | (any & PM_API_BULK_NEG_ZERO);
}

const unsigned char *pm_api_bulk_data(const json_t *j) {
    if (pm_api_bulk_is_ref(j)) {
        uint64_t at;
        memcpy(&at, json_string_value(j) + PM_API_BULK_TAG_LEN, sizeof at);
        return (const unsigned char *)(uintptr_t)at;
    }
    return (const unsigned char *)json_string_value(j) + PM_API_BULK_TAG_LEN;
}

double pm_api_bulk_at(const json_t *j, size_t i) {
    double x;
    pm_api_bulk_get(j, i, 1, &x);
    return x;
}

json_t *pm_api_bulk_expand(const json_t *j) {
    size_t n = pm_api_bulk_len(j);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, json_real(pm_api_bulk_at(j, i))) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}
