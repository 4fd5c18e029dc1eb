/*
 * tests/rf_test.h: what a concurrent test includes instead of <criterion/criterion.h>.
 *
 * Normally this *is* Criterion. Criterion cannot start under ThreadSanitizer (its process
 * arena aborts: "Could not initialize inheritable arena", Criterion issue #274), so the TSan
 * build compiles the same test sources with RF_TEST_STANDALONE and a small runner that
 * understands the subset of Criterion these tests use (shim/criterion_shim.h).
 */
#ifndef RINGFLOW_TESTS_RF_TEST_H
#define RINGFLOW_TESTS_RF_TEST_H

#ifdef RF_TEST_STANDALONE
#include "shim/criterion_shim.h"
#else
#include <criterion/criterion.h>
#endif

#endif
