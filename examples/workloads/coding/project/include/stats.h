/* A small statistics library: what the coding agent's job builds and tests. */
#ifndef STATS_H
#define STATS_H

#include <stddef.h>

/* The arithmetic mean of n values; 0 when n is 0. */
double stats_mean(const double *values, size_t n);
/* The median (sorts a copy); 0 when n is 0. */
double stats_median(const double *values, size_t n);
/* The largest value; 0 when n is 0. */
double stats_max(const double *values, size_t n);

#endif
