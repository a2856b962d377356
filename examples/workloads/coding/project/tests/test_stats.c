/* Prints one line per test: "pass NAME" or "fail NAME: MESSAGE"; tools/junit.py
   turns the lines into a JUnit XML report. */
#include <math.h>
#include <stdio.h>

#include "stats.h"

static int failures = 0;

static void expect_near(const char *name, double got, double want) {
  if (fabs(got - want) < 1e-9) {
    printf("pass %s\n", name);
  } else {
    printf("fail %s: got %g, want %g\n", name, got, want);
    ++failures;
  }
}

int main(void) {
  const double odd[] = {3, 1, 2};
  const double even[] = {4, 1, 3, 2};
  expect_near("mean_of_three", stats_mean(odd, 3), 2);
  expect_near("mean_of_none", stats_mean(odd, 0), 0);
  expect_near("median_odd", stats_median(odd, 3), 2);
  expect_near("median_even", stats_median(even, 4), 2.5);
  expect_near("max", stats_max(even, 4), 4);
  return failures ? 1 : 0;
}
