#ifndef PM_TEST_VALIDATOR_H
#define PM_TEST_VALIDATOR_H
#include <stddef.h>

#include "scene/scene.h"
#include "pm_api/generator.h"

/* Runs the Khronos glTF-Validator (npm gltf-validator in PM_NODE_DIR,
 * installed by `make node`) on one .gltf (is_glb 0) or GLB (is_glb 1)
 * document. Every message is printed to stderr and copied into report
 * (cap bytes, may be NULL). Returns errors + warnings (infos and hints are
 * listed but allowed), or -1 when the validator could not run: a test
 * should require 0. */
int pm_test_gltf_validate(const void *data, size_t len, int is_glb, char *report, size_t cap);

/* Encodes s in all three formats and checks each: the .gltf and the GLB
 * through the validator, the JSON mesh by parsing it back (counts, index
 * ranges and stats against the scene). Returns the number of problems
 * (validator errors + warnings + JSON mesh mismatches), -1 when a format
 * could not be encoded or checked. Use it in a generator's tests:
 *   cr_assert_eq(pm_test_validate_scene(scene, &pm_api_gen_junction), 0); */
int pm_test_validate_scene(const pm_scene *s, const pm_api_generator *gen);

/* Just the JSON mesh check of pm_test_validate_scene, on encoded bytes. */
int pm_test_check_json_mesh(const void *data, size_t len, const pm_scene *s);
#endif
