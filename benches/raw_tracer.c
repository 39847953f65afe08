/* The raw limit: bare ptrace doing the same work per event as scry, nothing else.
 *
 *   raw_tracer MODE COUNT ADDR PROGRAM ARGS...
 *
 *   step-regs  run to ADDR (an int3, untimed), then COUNT x (SINGLESTEP, wait, GETREGS) keeping
 *              the lowest rsp seen
 *   step       the same without GETREGS
 *   bp         int3 at ADDR; run to the end; at each hit: GETREGS (read rdi), put the original
 *              byte back, rewind rip (SETREGS), SINGLESTEP over it, re-insert the int3, CONT
 *   watch      DR0 = ADDR, DR7 = 8-byte write watch (POKEUSER); run to the end; at each hit read
 *              DR6 (a trap with DR6 empty counts: its status was lost) and CONT
 *
 * Prints one line: RESULT mode=M events=N seconds=S check=X
 * The timed span starts just before the first resume of the measured work and ends at the
 * last event (step) or at the exit of the program (bp, watch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;

static void die(const char *what) {
    fprintf(stderr, "raw_tracer: %s: %s\n", what, strerror(errno));
    if (child > 0) kill(child, SIGKILL);
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits for the child; returns the wait status. */
static int wait_child(void) {
    int status;
    for (;;) {
        pid_t r = waitpid(child, &status, __WALL);
        if (r == child) return status;
        if (r < 0 && errno != EINTR) die("waitpid");
    }
}

static void expect_trap(int status, const char *when) {
    if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
        fprintf(stderr, "raw_tracer: %s: unexpected wait status 0x%x\n", when, status);
        kill(child, SIGKILL);
        exit(1);
    }
}

static long peek(uintptr_t addr) {
    errno = 0;
    long v = ptrace(PTRACE_PEEKDATA, child, (void *)addr, NULL);
    if (errno) die("PEEKDATA");
    return v;
}

static void poke(uintptr_t addr, long word) {
    if (ptrace(PTRACE_POKEDATA, child, (void *)addr, (void *)word) < 0) die("POKEDATA");
}

static void resume(int request, int sig) {
    if (ptrace(request, child, NULL, (void *)(long)sig) < 0) die("resume");
}

static void get_regs(struct user_regs_struct *r) {
    if (ptrace(PTRACE_GETREGS, child, NULL, r) < 0) die("GETREGS");
}

static void set_regs(const struct user_regs_struct *r) {
    if (ptrace(PTRACE_SETREGS, child, NULL, r) < 0) die("SETREGS");
}

static long with_int3(long word) { return (word & ~0xffL) | 0xcc; }

/* Runs the stopped child to an int3 at addr and leaves it there with the byte restored and
 * rip rewound, as a debugger stopped at a breakpoint would be. Not timed. */
static void run_to(uintptr_t addr) {
    long orig = peek(addr);
    poke(addr, with_int3(orig));
    resume(PTRACE_CONT, 0);
    int status = wait_child();
    expect_trap(status, "running to the start address");
    struct user_regs_struct r;
    get_regs(&r);
    if (r.rip != addr + 1) {
        fprintf(stderr, "raw_tracer: stopped at 0x%llx, expected 0x%lx\n", r.rip, (unsigned long)addr + 1);
        kill(child, SIGKILL);
        exit(1);
    }
    poke(addr, orig);
    r.rip = addr;
    set_regs(&r);
}

static void steps(long n, int read_regs, unsigned long long *min_sp) {
    struct user_regs_struct r;
    for (long i = 0; i < n; i++) {
        resume(PTRACE_SINGLESTEP, 0);
        int status = wait_child();
        expect_trap(status, "single-step");
        if (read_regs) {
            get_regs(&r);
            if (r.rsp < *min_sp) *min_sp = r.rsp;
        }
    }
}

/* Runs to the end of the program; at every hit of the int3 at addr does a debugger's work. */
static long breakpoints(uintptr_t addr, unsigned long long *check) {
    long orig = peek(addr);
    long armed = with_int3(orig);
    poke(addr, armed);
    long hits = 0;
    struct user_regs_struct r;
    resume(PTRACE_CONT, 0);
    for (;;) {
        int status = wait_child();
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        if (!WIFSTOPPED(status)) continue;
        int sig = WSTOPSIG(status);
        if (sig != SIGTRAP) {
            resume(PTRACE_CONT, sig);
            continue;
        }
        get_regs(&r);
        if (r.rip != addr + 1) {
            resume(PTRACE_CONT, 0);
            continue;
        }
        hits++;
        *check += r.rdi;
        poke(addr, orig);
        r.rip = addr;
        set_regs(&r);
        resume(PTRACE_SINGLESTEP, 0);
        expect_trap(wait_child(), "stepping over the breakpoint");
        poke(addr, armed);
        resume(PTRACE_CONT, 0);
    }
    return hits;
}

static long watches(uintptr_t addr, unsigned long long *check) {
    const size_t dr0 = offsetof(struct user, u_debugreg[0]);
    const size_t dr6 = offsetof(struct user, u_debugreg[6]);
    const size_t dr7 = offsetof(struct user, u_debugreg[7]);
    /* L0 enable, R/W0 = 01 (write), LEN0 = 10 (8 bytes). */
    unsigned long ctl = 1UL | (1UL << 16) | (2UL << 18);
    if (ptrace(PTRACE_POKEUSER, child, (void *)dr0, (void *)addr) < 0) die("POKEUSER DR0");
    if (ptrace(PTRACE_POKEUSER, child, (void *)dr7, (void *)ctl) < 0) die("POKEUSER DR7");
    long hits = 0;
    resume(PTRACE_CONT, 0);
    for (;;) {
        int status = wait_child();
        if (WIFEXITED(status) || WIFSIGNALED(status)) break;
        if (!WIFSTOPPED(status)) continue;
        int sig = WSTOPSIG(status);
        if (sig != SIGTRAP) {
            resume(PTRACE_CONT, sig);
            continue;
        }
        errno = 0;
        long status6 = ptrace(PTRACE_PEEKUSER, child, (void *)dr6, NULL);
        if (errno) die("PEEKUSER DR6");
        /* A trap with DR6 empty is a hit whose status the machine lost (seen under KVM:
         * the kernel takes it for an icebp); this program has no other SIGTRAP. scry books
         * those as hits too (inferior take_lost_debug_trap). */
        if (status6 & 1 || (status6 & 0xf) == 0) {
            hits++;
            *check += 1;
        }
        resume(PTRACE_CONT, 0);
    }
    return hits;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s step-regs|step|bp|watch COUNT ADDR PROGRAM ARGS...\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    long count = strtol(argv[2], NULL, 0);
    uintptr_t addr = (uintptr_t)strtoull(argv[3], NULL, 0);

    child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) _exit(126);
        personality(ADDR_NO_RANDOMIZE);
        execv(argv[4], argv + 4);
        _exit(127);
    }
    expect_trap(wait_child(), "exec");
    if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(long)PTRACE_O_EXITKILL) < 0) die("SETOPTIONS");

    long events = 0;
    unsigned long long check = 0;
    double t0, t1;
    if (strcmp(mode, "step-regs") == 0 || strcmp(mode, "step") == 0) {
        run_to(addr);
        unsigned long long min_sp = ~0ULL;
        t0 = now();
        steps(count, mode[4] == '-', &min_sp);
        t1 = now();
        events = count;
        check = min_sp == ~0ULL ? 0 : min_sp;
        kill(child, SIGKILL);
        wait_child();
    } else if (strcmp(mode, "bp") == 0) {
        t0 = now();
        events = breakpoints(addr, &check);
        t1 = now();
    } else if (strcmp(mode, "watch") == 0) {
        t0 = now();
        events = watches(addr, &check);
        t1 = now();
    } else {
        fprintf(stderr, "raw_tracer: unknown mode %s\n", mode);
        kill(child, SIGKILL);
        return 2;
    }
    printf("RESULT mode=%s events=%ld seconds=%.6f check=%llu\n", mode, events, t1 - t0, check);
    return 0;
}
