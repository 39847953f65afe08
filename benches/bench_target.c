/* The program every debugger in the benchmark drives.
 *
 *   bench_target step  N   calls step_region(N): a loop of plain arithmetic, no calls and no
 *                          system calls, at least N instructions long (the tracer stops it
 *                          after its N single-steps and kills it)
 *   bench_target bp    M   calls target_fn(i) M times
 *   bench_target watch K   writes the global `watched` K times
 *
 * Built with -O2 -no-pie: the symbols are at fixed addresses the raw tracer reads from nm.
 * Everything a debugger touches is noinline or volatile so -O2 keeps it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long watched;  /* the watchpoint workload writes this, 8 bytes, aligned */
volatile long sink;     /* keeps target_fn's results alive */

__attribute__((noinline)) long target_fn(long x) {
    /* A tiny body: the cost measured is the breakpoint round trip, not this. */
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

__attribute__((noinline)) void watch_loop(long k) {
    for (long i = 0; i < k; i++) watched = i + 1;
}

__attribute__((noinline)) void bp_loop(long m) {
    for (long i = 0; i < m; i++) sink += target_fn(i);
}

/* Straight-line arithmetic in a loop: about 8 instructions per iteration, nothing that could
 * leave the function, so a single-stepper sees only these instructions. */
__attribute__((noinline)) long step_region(long n) {
    volatile long acc = 1;
    for (long i = 0; i < n; i++) {
        acc = acc * 5 + i;
        acc ^= i << 3;
    }
    return acc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s step|bp|watch COUNT\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    if (strcmp(argv[1], "step") == 0) {
        sink = step_region(n);
    } else if (strcmp(argv[1], "bp") == 0) {
        bp_loop(n);
    } else if (strcmp(argv[1], "watch") == 0) {
        watch_loop(n);
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}
