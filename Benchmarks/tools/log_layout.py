#!/usr/bin/env python3
"""What a durable commit of one approval costs under three log layouts, against the raw
LMDB baseline (one append + one random index put). Not part of `make bench`: the
experiment behind the projection lag and the log index (Benchmarks/README.md, third pass).

  raw    events (append) + an index put at a random key: two B-trees, two leaves
  def4   events + three more trees: the action index (random key), commands (right edge),
         meta (the head record) -- the log's old layout once projections stopped folding
         in every commit
  comb2  events + one index tree holding all three as key ranges -- the `log_index` layout
  cur9   events + eight trees with a random put each: an approval before either change

Commits alternate between the layouts, so each sees the same disk at the same moment.
Prints each layout's median commit latency and its ratio to raw.

    pip install lmdb && python3 Benchmarks/tools/log_layout.py [COMMITS]
"""
import os, shutil, time, lmdb, struct, sys
root = "/tmp/actionledger-layout"; shutil.rmtree(root, ignore_errors=True); os.makedirs(root)
N = 50000
def mk(name, ndb):
    p = os.path.join(root, name); os.makedirs(p)
    env = lmdb.open(p, map_size=1<<32, max_dbs=64)
    dbs = [env.open_db(b"db%d" % i) for i in range(ndb)]
    with env.begin(write=True) as t:
        for i in range(N):
            t.put(struct.pack(">Q", i), b"e"*282, db=dbs[0], append=True)
            for d in dbs[1:]:
                t.put(os.urandom(10)+struct.pack(">Q", i), b"", db=d)
    return env, dbs
envs = {k: mk(k, n) for k, n in [("raw",2),("def4",4),("comb2",2),("cur9",9)]}
seq = {k: N for k in envs}
def commit(k):
    env, dbs = envs[k]; s = seq[k]; seq[k] += 1
    t0 = time.perf_counter()
    with env.begin(write=True) as t:
        t.put(struct.pack(">Q", s), b"e"*282, db=dbs[0], append=True)
        if k == "raw":
            t.put(os.urandom(10)+struct.pack(">Q", s), b"", db=dbs[1])
        elif k == "def4":
            t.put(os.urandom(10)+struct.pack(">Q", s), b"", db=dbs[1])
            t.put(b"cmd"+struct.pack(">Q", s), b"x"*12, db=dbs[2])
            t.put(b"head", b"h"*40, db=dbs[3])
        elif k == "comb2":
            t.put(b"\x03"+os.urandom(10)+struct.pack(">Q", s), b"", db=dbs[1])
            t.put(b"\x02cmd"+struct.pack(">Q", s), b"x"*12, db=dbs[1])
            t.put(b"\x01head", b"h"*40, db=dbs[1])
        else:
            for d in dbs[1:]:
                t.put(os.urandom(10)+struct.pack(">Q", s), b"x"*40, db=d)
    return time.perf_counter()-t0
res = {k: [] for k in envs}
for i in range(int(sys.argv[1]) if len(sys.argv)>1 else 300):
    for k in envs: res[k].append(commit(k))
for k, v in res.items():
    v.sort(); print(k, "p50 %.0f us" % (v[len(v)//2]*1e6), "ratio %.2f" % (v[len(v)//2]/sorted(res["raw"])[len(v)//2]))
