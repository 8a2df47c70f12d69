/* The C API tests' check (C99): counts checks and failures, and prints each failure with its
 * file and line. Included once per test program. */
#ifndef KS_TESTS_CAPI_CHECK_H
#define KS_TESTS_CAPI_CHECK_H
#include <stdio.h>

static int failures = 0;
static int checks = 0;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        ++checks;                                                \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            ++failures;                                          \
        }                                                        \
    } while (0)

#endif
