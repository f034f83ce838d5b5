/* The job limit (--max-job-mb) is monotonic: a job a cap accepts, every
 * higher cap accepts too. A job runs here the way a worker runs it
 * (service/server.c: the arena's blocks and the encoder's buffers charged
 * to the job's meter, service/budget.c), once without a limit to learn the
 * peak it holds, then under caps walked up to that peak. (Network 1.3.1's
 * town GLB fitted at 38 MiB, not at 40, and again from 42: a block the
 * arena took at 4 MiB under a higher cap, and retried at its need under a
 * lower one, left no room for the output.) */
#include <criterion/criterion.h>
#include <jansson.h>

#include "budget.h"
#include "pm_api/generator.h"
#include "pm_api/request.h"
#include "test_http_memory_town.h"

/* Runs the job under limit (0: none) as a worker does. Returns 1 when it
 * fits, 0 when the meter refused it (any other failure fails the test);
 * *peak: the most it held. */
static int run_job(const json_t *doc, const pm_api_output *o, size_t limit, size_t *peak) {
    const pm_api_generator *gen = pm_api_find_generator("/v1/networks");
    cr_assert_not_null(gen);
    pm_api_limits lim;
    pm_api_limits_default(&lim);
    lim.max_vertices = 50000000;
    pm_svc_budget *b = pm_svc_budget_create(0);
    pm_svc_meter m;
    pm_svc_meter_init(&m, b, limit);
    pm_arena *arena = pm_arena_create_with(0, &m.arena);
    pm_api_problem p;
    pm_api_problem_init(&p);
    pm_api_job job;
    pm_scene *scene = NULL;
    pm_api_buf out = {0};
    int fits = pm_api_job_parse(&job, gen, &lim, arena, doc, &p) == 0;
    if (fits) {
        char hex[33];
        pm_api_job_key(&job, o, hex);
        fits = pm_api_job_generate(&job, NULL, &scene, &p) == 0 &&
               pm_api_encode_with(scene, gen, hex, o, &m.enc, &out) == 0;
        pm_api_job_end(&job);
    }
    cr_assert(fits || m.refused == PM_SVC_REFUSED_JOB, "failed for another reason: %s",
              p.detail);
    if (fits) m.enc.free(m.enc.ctx, out.data, out.len);
    pm_arena_destroy(arena);
    *peak = m.peak;
    cr_assert_eq(m.held, 0, "everything went back");
    pm_svc_meter_end(&m);
    pm_api_problem_free(&p);
    pm_svc_budget_destroy(b);
    return fits;
}

/* Walks caps from 5/8 of the job's unlimited peak to 1 MiB above it in
 * steps of 1 MiB: once the job fits, it fits under every higher cap; it
 * fits at its peak, and the walk saw it refused. exact: it fits exactly
 * from its peak on (nothing is retried smaller; the encoder's text buffer
 * is, when doubling is refused, so a JSON answer may fit below). */
static void walk_caps(const json_t *doc, const pm_api_output *o, bool exact) {
    size_t peak, p2, lowest = 0;
    cr_assert_eq(run_job(doc, o, 0, &peak), 1);
    /* 12 MiB: a walk of at least five caps (the 6 x 6 town held over 16 MiB
     * before session 21 gave the roads' copies back earlier; 15.2 MiB after) */
    cr_assert_gt(peak, (size_t)12 << 20, "a job big enough to walk: %zu", peak);
    for (size_t cap = peak / 8 * 5; cap <= peak + ((size_t)1 << 20); cap += (size_t)1 << 20) {
        int fits = run_job(doc, o, cap, &p2);
        cr_assert(fits || !lowest, "cap %.2f MiB: refused, though %.2f MiB fitted (peak %.2f MiB)",
                  cap / 1048576.0, lowest / 1048576.0, peak / 1048576.0);
        if (exact) cr_assert_eq(fits, cap >= peak, "cap %.2f MiB, peak %.2f MiB", cap / 1048576.0,
                                peak / 1048576.0);
        if (fits && !lowest) lowest = cap;
    }
    cr_assert_gt(lowest, peak / 8 * 5, "refused under the lowest cap walked");
    cr_assert_eq(run_job(doc, o, peak, &p2), 1, "fits at its peak");
    cr_assert_leq(p2, peak);
    if (exact) cr_assert_eq(run_job(doc, o, peak - 1, &p2), 0, "refused a byte below its peak");
}

Test(http_memory_caps, a_higher_cap_never_refuses_a_quantized_glb) {
    json_t *doc = pm_test_town(6, 0.5, 0);
    pm_api_output o = pm_api_output_default(PM_API_FMT_GLB);
    o.quantize = true;
    o.metadata = PM_API_META_NONE;
    walk_caps(doc, &o, true);
    json_decref(doc);
}

Test(http_memory_caps, a_higher_cap_never_refuses_a_json_answer) {
    json_t *doc = pm_test_town(6, 0.5, 0);
    pm_api_output o = pm_api_output_default(PM_API_FMT_JSON);
    walk_caps(doc, &o, false);
    json_decref(doc);
}
