#!/usr/bin/env python3
"""CPU time of one command's own process, without the shell that starts it.

    cpu_run.py WARMUP RUNS 'COMMAND ARGS... [< FILE]'

Runs the command WARMUP times untimed, then RUNS times, each as one process
(fork and exec, no shell: a `bash -c` around it costs about 1.2 ms of CPU on
this host, a quarter of a 10x10 town's run), its stdin from FILE when the
command ends in `< FILE`, its stdout and stderr discarded. `$$` in the
command becomes a name unique to each run (a file per run). Prints the
median of the runs' user + system CPU milliseconds, as wait4 reports them
for that process (microseconds), then the runs. Exits 1, naming the
command, when a run fails.
"""
import os
import shlex
import statistics
import sys


def run(argv, stdin_path, tag):
    argv = [a.replace("$$", tag) for a in argv]
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(stdin_path, os.O_RDONLY) if stdin_path else os.open(os.devnull, os.O_RDONLY)
            os.dup2(fd, 0)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.stderr.write(f"cpu_run: failed ({status}): {' '.join(argv)}\n")
        sys.exit(1)
    return 1000.0 * (ru.ru_utime + ru.ru_stime)


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    warmup, runs, words = int(sys.argv[1]), int(sys.argv[2]), shlex.split(sys.argv[3])
    stdin_path = None
    if len(words) >= 2 and words[-2] == "<":
        stdin_path, words = words[-1], words[:-2]
    if "<" in words or ">" in words or "|" in words:
        sys.stderr.write(f"cpu_run: only a trailing '< FILE' is understood: {sys.argv[3]}\n")
        sys.exit(2)
    n = 0
    for _ in range(warmup):
        n += 1
        run(words, stdin_path, f"{os.getpid()}_{n}")
    ts = []
    for _ in range(runs):
        n += 1
        ts.append(run(words, stdin_path, f"{os.getpid()}_{n}"))
    print(f"{statistics.median(ts):.3f}", " ".join(f"{t:.3f}" for t in ts))


if __name__ == "__main__":
    main()
