#!/usr/bin/env python3
"""What a durable write costs on this disk as a function of the pages it writes. Not part
of `make bench`: the measurement behind the group-commit ceiling (Benchmarks/README.md,
"Floors").

  file   pwrite k 4 KiB pages then fdatasync: contiguous pages against scattered ones
  lmdb   one LMDB commit (default flags: fsync'd) that puts k keys at random places in a
         200 000-entry tree, so it dirties about k leaves

Group commit pays one fsync per group, which amortises well when a flush costs the same
whatever it carries. Where it costs per page written, a group's commit grows with the
pages its commands dirty, and the group's speed-up is bounded by pages per command.
Alternates the variants, reports medians.

    pip install lmdb && python3 Benchmarks/tools/fsync_pages.py [ROUNDS]
"""
import os, random, shutil, sys, time
import lmdb

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
root = "/tmp/actionledger-fsync"
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
PAGE = 4096


def median(xs):
    return sorted(xs)[len(xs) // 2] * 1e6


def file_writes():
    fd = os.open(os.path.join(root, "pages.bin"), os.O_RDWR | os.O_CREAT)
    os.ftruncate(fd, 65536 * PAGE)
    os.fsync(fd)
    block = b"z" * PAGE
    print("pages  contiguous  scattered   (pwrite + fdatasync, median µs)")
    for k in (1, 2, 4, 8, 16, 32):
        t = {"contiguous": [], "scattered": []}
        for r in range(ROUNDS):
            for mode in (("contiguous", "scattered") if r % 2 else ("scattered", "contiguous")):
                if mode == "contiguous":
                    b = random.randrange(65536 - k)
                    offsets = [(b + i) * PAGE for i in range(k)]
                else:
                    offsets = [random.randrange(65536) * PAGE for _ in range(k)]
                s = time.perf_counter()
                for o in offsets:
                    os.pwrite(fd, block, o)
                os.fdatasync(fd)
                t[mode].append(time.perf_counter() - s)
        print("%5d  %10.0f  %9.0f" % (k, median(t["contiguous"]), median(t["scattered"])))
    os.close(fd)


def lmdb_commits():
    env = lmdb.open(os.path.join(root, "tree"), map_size=1 << 30)
    with env.begin(write=True) as t:
        for _ in range(200_000):
            t.put(os.urandom(16), b"x" * 40)
    print("puts   LMDB commit (median µs)")
    for k in (1, 2, 4, 8, 16, 32, 64):
        times = []
        for _ in range(ROUNDS):
            t = env.begin(write=True)
            for _ in range(k):
                t.put(os.urandom(16), b"y" * 40)
            s = time.perf_counter()
            t.commit()
            times.append(time.perf_counter() - s)
        print("%4d   %10.0f" % (k, median(times)))


file_writes()
lmdb_commits()
