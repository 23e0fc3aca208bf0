#!/usr/bin/env python3
"""What a durable LMDB commit costs as a function of the B-trees and leaves it dirties.

Not part of `make bench`: the experiment behind the projection layout (one LMDB database
per projection, Benchmarks/README.md). Each commit puts one ~150-byte value at a random
key into each of `trees` databases, `puts` times, on stores of 3000 entries per tree;
every commit is fsync'd (LMDB's defaults). Prints the median commit latency.

    pip install lmdb && python3 Benchmarks/tools/tree_fanout.py [DIR]
"""
import os
import shutil
import sys
import time

import lmdb


def median_commit_us(root, trees, puts, commits=400):
    path = os.path.join(root, "fanout-%d-%d" % (trees, puts))
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    env = lmdb.open(path, map_size=1 << 30, max_dbs=64)
    dbs = [env.open_db(b"db%d" % i) for i in range(trees)]
    with env.begin(write=True) as txn:
        for i in range(3000):
            for db in dbs:
                txn.put(b"%08d-prefill-key-xxxxxxxx" % i, b"v" * 100, db=db)
    samples = []
    for k in range(commits):
        start = time.perf_counter()
        with env.begin(write=True) as txn:
            for db in dbs:
                for _ in range(puts):
                    txn.put(os.urandom(8) + b"%08d" % k, b"v" * 150, db=db)
        samples.append(time.perf_counter() - start)
    env.close()
    shutil.rmtree(path, ignore_errors=True)
    samples.sort()
    return samples[len(samples) // 2] * 1e6


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/actionledger-fanout"
    for trees, puts in [(2, 1), (6, 1), (9, 2), (17, 1), (1, 17)]:
        print("%2d trees x %2d puts: %6.0f us per durable commit (p50)" % (trees, puts, median_commit_us(root, trees, puts)))
