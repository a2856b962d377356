#include "stats.h"

#include <stdlib.h>
#include <string.h>

double stats_mean(const double *values, size_t n) {
  if (n == 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += values[i];
  return sum / (double)n;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double stats_median(const double *values, size_t n) {
  if (n == 0) return 0;
  double *copy = malloc(n * sizeof *copy);
  if (!copy) abort();
  memcpy(copy, values, n * sizeof *copy);
  qsort(copy, n, sizeof *copy, compare);
  double m = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
  free(copy);
  return m;
}

double stats_max(const double *values, size_t n) {
  if (n == 0) return 0;
  double m = values[0];
  for (size_t i = 1; i < n; ++i)
    if (values[i] > m) m = values[i];
  return m;
}
