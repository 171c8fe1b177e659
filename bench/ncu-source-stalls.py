"""Where a kernel's warps wait, per SASS instruction, from Nsight Compute's source counters:
the CSV that `ncu --import REPORT --page source --csv --print-source sass` writes for a report
taken with `--section SourceCounters --section WarpStateStats` (optionally gzipped). Prints the
share of each stall reason over all stall samples, the instructions with the most samples of
one reason (`--reason`, default all reasons together), and the share of the samples in each
window of `--window` consecutive instructions (windows under 0.4% left out), with the largest
executed count in the window and the kinds of the notable instructions in it (MMA, barriers,
exponentials, loads and stores), so that a loop's head, body and tail can be told apart.
Usage: python3 bench/ncu-source-stalls.py FILE.csv[.gz] [--top N] [--reason stall_long_sb] [--window 50]
"""
import argparse, csv, gzip, io

ALL = 'Warp Stall Sampling (All Samples)'
EXEC = 'Instructions Executed'
NOTABLE = ('HGMMA', 'MUFU', 'SYNCS', 'BAR', 'MEMBAR', 'LDG', 'STG', 'LDL', 'STL', 'LDS', 'STS',
           'SHFL', 'F2FP', 'FMNMX', 'UTMALDG', 'WARPGROUP')

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--top', type=int, default=12)
    ap.add_argument('--reason', default=ALL)
    ap.add_argument('--window', type=int, default=50)
    a = ap.parse_args()
    raw = gzip.open(a.file, 'rb').read() if a.file.endswith('.gz') else open(a.file, 'rb').read()
    rows = list(csv.reader(io.StringIO(raw.decode())))
    header = next(r for r in rows if r and r[0] == 'Address')
    data = rows[rows.index(header) + 1:]
    col = {h: i for i, h in enumerate(header)}
    def num(r, c):
        try:
            return float(r[col[c]])
        except (ValueError, IndexError, KeyError):
            return 0.0
    total = sum(num(r, ALL) for r in data)
    reasons = [h for h in header if h.startswith('stall_') and '(Not Issued)' not in h]
    print(f'{a.file}: {len(data)} instructions, {int(total)} stall samples')
    shares = sorted(((sum(num(r, c) for r in data) / total * 100, c[6:]) for c in reasons), reverse=True)
    print('reasons: ' + ', '.join(f'{name} {p:.1f}%' for p, name in shares if p >= 0.5))
    def top_reason(r):
        return max(reasons, key=lambda c: num(r, c))[6:]
    print(f'\ninstructions with the most samples ({a.reason}):')
    for i in sorted(range(len(data)), key=lambda i: -num(data[i], a.reason))[:a.top]:
        r = data[i]
        print(f'  {i:5d} {num(r, a.reason) / total * 100:5.2f}%  top {top_reason(r):13s} '
              f'executed {int(num(r, EXEC)):8d}  {r[1].strip()[:72]}')
    print(f'\nwindows of {a.window} instructions (all samples):')
    for s in range(0, len(data), a.window):
        win = data[s:s + a.window]
        share = sum(num(r, ALL) for r in win) / total * 100
        if share < 0.4:
            continue
        kinds = sorted({op.split('.')[0] for r in win
                        for op in [next((t for t in r[1].split() if not t.startswith('@')), '')]
                        if op.split('.')[0] in NOTABLE})
        print(f'  {s:5d}-{s + len(win) - 1:5d} {share:5.1f}%  executed <= {int(max(num(r, EXEC) for r in win)):8d}  '
              + ' '.join(kinds))

if __name__ == '__main__':
    main()
