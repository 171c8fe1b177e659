"""The mean over rounds of every kernel time and total in an A/B log (the ab.txt that
bench/device-ab.sh NAME ab writes: "== round N SET WORKLOAD" blocks of flamia-run --bench
lines), one line per (set, workload, kernel or total), and for each SET with a SET-old in
the log the change against it. Usage: python3 bench/ab-summary.py ab.txt
"""
import collections, re, sys

times = collections.defaultdict(list)
current = None
for line in open(sys.argv[1]):
    m = re.match(r'== round \d+ (\S+) (\S+)', line)
    if m:
        current = (m.group(1), m.group(2))
        continue
    if current is None:
        continue
    m = re.match(r'\s+kernel (\S+)\s+\S+\s+([\d.]+) ms', line)
    if m:
        times[current + (m.group(1),)].append(float(m.group(2)))
        continue
    m = re.match(r'\s+(forward \+ backward|backward|forward|quantization \+ forward)\b[^:]*: ([\d.]+) ms', line)
    if m:
        times[current + (m.group(1),)].append(float(m.group(2)))
mean = {k: sum(v) / len(v) for k, v in times.items()}
for (s, w, what), t in sorted(mean.items()):
    spread = (max(times[(s, w, what)]) - min(times[(s, w, what)])) / t * 100
    line = f'{s:14s} {w:12s} {what:32s} {t:9.4f} ms (rounds {len(times[(s, w, what)])}, spread {spread:.1f}%)'
    old = mean.get((s + '-old', w, what))
    if old:
        line += f'  vs {s}-old {old:.4f} ms: {(t / old - 1) * 100:+.1f}%'
    print(line)
