/* The place both debuggers render their views of: four threads (main plus three workers
 * parked in pause()), the main thread five frames deep:
 *   main -> level1 -> level2 -> level3 -> innermost
 * Built with -O0 -g; the bench stops at the breakpoint on `innermost`. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_barrier_t ready;
volatile long result;

static void *worker(void *arg) {
    (void)arg;
    pthread_barrier_wait(&ready);
    for (;;) pause();
    return NULL;
}

__attribute__((noinline)) long innermost(long a, long b) {
    long r = a * b + 7;
    result = r;
    return r;
}

__attribute__((noinline)) long level3(long x) { return innermost(x, x + 1) + 3; }
__attribute__((noinline)) long level2(long x) { return level3(x * 2) + 2; }
__attribute__((noinline)) long level1(long x) { return level2(x + 1) + 1; }

int main(void) {
    pthread_t t[3];
    char name[16];
    pthread_barrier_init(&ready, NULL, 4);
    for (int i = 0; i < 3; i++) {
        pthread_create(&t[i], NULL, worker, NULL);
        snprintf(name, sizeof name, "worker-%d", i + 1);
        pthread_setname_np(t[i], name);
    }
    pthread_barrier_wait(&ready);
    /* Give the workers time to reach pause() so both debuggers see the same picture. */
    usleep(100 * 1000);
    printf("%ld\n", level1(20));
    return 0;
}
