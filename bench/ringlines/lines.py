#!/usr/bin/env python3
"""bench/ringlines/lines.py LACKEY_LOG DRIVER_STDERR: per enqueue and per dequeue of the measured
stretch, the instructions executed and the cache-line transfers between the two sides.

Two caches, one per side (producer: enqueue calls, consumer: dequeue calls), each holding lines
of the ring's memory. A read of a line the side does not hold is a transfer (the line comes from
the other side); a write to a line the other side holds is a transfer (ownership: the other
copy is invalidated). Lines only one side touches never transfer, so what is counted is exactly
the lines one side writes and the other reads, each time it changes hands."""
import collections
import sys

log, err = sys.argv[1], sys.argv[2]
for line in open(err):
    w = line.split()
    if w and w[0] == 'RANGE':
        lo, hi = int(w[1], 16), int(w[2], 16)
    elif w and w[0] == 'MARKS':
        marks = int(w[1], 16)

SIDE = {1: 'P', 3: 'P', 2: 'C', 4: 'C'}
holders = collections.defaultdict(set)
cur, measured = 0, False
calls, instr = collections.Counter(), collections.Counter()
xfer = collections.Counter()

for line in open(log):
    if line.startswith('=='):
        continue
    counted = measured and cur in (1, 2)
    if line[0] == 'I':
        if counted:
            instr[SIDE[cur]] += 1
        continue
    kind = line[1]
    try:
        addr = int(line[2:].split(',')[0], 16)
    except ValueError:
        continue
    if kind in 'SM' and marks <= addr < marks + 64:
        m = (addr - marks) // 4
        if counted:
            calls[SIDE[cur]] += 1
        if m == 9:
            measured = True
        elif m == 8:
            measured, cur = False, 0
        else:
            cur = m
        continue
    if cur == 0 or not lo <= addr < hi:
        continue
    side = SIDE[cur]
    h = holders[addr // 64]
    if kind == 'L':
        if side not in h:
            xfer[side] += counted
            h.add(side)
    elif h != {side}:  # S or M: a store needs the only copy
        xfer[side] += counted
        h.clear()
        h.add(side)

p, c = calls['P'] or 1, calls['C'] or 1
print('%6.0f %6.0f %8.2f %8.2f' % (instr['P'] / p, instr['C'] / c, xfer['P'] / p, xfer['C'] / c))
