"""The rows of docs/performance.md's table against the baselines (run 78's columns) from one
`bench/device-ab.sh NAME table` run: FLAMIA's numbers from its summary.txt (the forward set's
blocks, then the training set's), the baselines' from the anchors.json beside it.
Usage: python3 bench/table-rows.py TABLE_DIR   (the folder holding summary.txt, anchors.json)
"""
import json, os, re, sys

WORKLOADS = [('single16k', 128), ('single32k', 128), ('fixed2k', 128), ('lognormal1k', 128),
             ('lognormal1k', 64)]

def flamia_numbers(path):
    """{(workload, d): {'fwd', 'qfwd', 'qgbs', 'bwd', 'step'}}: a block's first forward
    numbers are the forward set's, its training numbers the training set's."""
    out, key = {}, None
    for line in open(path):
        m = re.match(r'== flamia (\w+)-d(\d+)', line)
        if m:
            key = (m.group(1), int(m.group(2)))
            out.setdefault(key, {})
            continue
        if key is None:
            continue
        row = out[key]
        m = re.match(r'\s+quantization \(1 kernel\): [\d.]+ ms, \S+ bytes, ([\d.]+) GB/s', line)
        if m and 'qgbs' not in row:
            row['qgbs'] = float(m.group(1))
        m = re.match(r'\s+forward: [\d.]+ ms, ([\d.]+) TFLOP/s', line)
        if m and 'fwd' not in row:
            row['fwd'] = float(m.group(1))
        m = re.match(r'\s+quantization \+ forward: [\d.]+ ms, ([\d.]+) TFLOP/s', line)
        if m and 'qfwd' not in row:
            row['qfwd'] = float(m.group(1))
        m = re.match(r'\s+backward \(with its quantization\): [\d.]+ ms, ([\d.]+) TFLOP/s', line)
        if m:
            row['bwd'] = float(m.group(1))
        m = re.match(r'\s+forward \+ backward \(both quantizations\): [\d.]+ ms, ([\d.]+) TFLOP/s', line)
        if m:
            row['step'] = float(m.group(1))
    return out

def anchor(anchors, prefix, workload, d):
    for e in anchors:
        name = e.get('name', '')
        if name.startswith(prefix + ' |') and f'| {workload} ' in name and f' D={d} ' in name:
            return e.get('tflops')
    return None

def fmt(x, digits=0):
    return 'n/a' if x is None else f'{x:.{digits}f}'

def ratio(a, b):
    return 'n/a' if a is None or b is None else f'{a / b:.2f}x'

def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    try:
        ours = flamia_numbers(os.path.join(folder, 'summary.txt'))
        with open(os.path.join(folder, 'anchors.json')) as f:
            anchors = json.load(f)
        if not isinstance(anchors, list):
            raise ValueError('not a list of anchors')
    except (OSError, ValueError) as e:
        sys.exit(f'table-rows: {folder}: {e}')
    ceiling = next((e['tbps'] for e in anchors if e.get('name', '').startswith('ceiling d2d copy')), None)
    print('| workload | FLAMIA fwd | q + fwd | quantizer GB/s | FA4 fwd | cuDNN fwd | varlen_attn fwd '
          '| fwd / FA4 | q + fwd / FA4 | FLAMIA bwd incl. q | FA4 bwd det. (non-det.) | bwd / FA4 det. '
          '| FLAMIA step | FA4 fwd+bwd | cuDNN fwd+bwd | step / FA4 |')
    print('|---|' + '---:|' * 15)
    for w, d in WORKLOADS:
        r = ours.get((w, d), {})
        fa4 = anchor(anchors, 'fa4-cute varlen bf16 fwd', w, d)
        fa4_bwd_det = anchor(anchors, 'fa4-cute varlen bf16 bwd deterministic', w, d)
        fa4_bwd = anchor(anchors, 'fa4-cute varlen bf16 bwd', w, d)
        fa4_step = anchor(anchors, 'fa4-cute varlen bf16 fwd+bwd', w, d)
        cudnn = anchor(anchors, 'sdpa-cudnn_attention bf16 fwd', w, d)
        cudnn_step = anchor(anchors, 'sdpa-cudnn_attention bf16 fwd+bwd', w, d)
        varlen = anchor(anchors, 'varlen_attn bf16 fwd', w, d)
        print(f"| {w}, D={d} | {fmt(r.get('fwd'))} | {fmt(r.get('qfwd'))} | {fmt(r.get('qgbs'))} "
              f"| {fmt(fa4)} | {fmt(cudnn)} | {fmt(varlen)} | {ratio(r.get('fwd'), fa4)} "
              f"| {ratio(r.get('qfwd'), fa4)} | {fmt(r.get('bwd'))} | {fmt(fa4_bwd_det)} ({fmt(fa4_bwd)}) "
              f"| {ratio(r.get('bwd'), fa4_bwd_det)} | {fmt(r.get('step'))} | {fmt(fa4_step)} "
              f"| {fmt(cudnn_step)} | {ratio(r.get('step'), fa4_step)} |")
    if ceiling:
        print(f'\ncopy ceiling {ceiling:.2f} TB/s; quantizer share of it: ' + ', '.join(
            f"{w} D={d} {ours[(w, d)]['qgbs'] / (ceiling * 1000) * 100:.0f}%"
            for w, d in WORKLOADS if 'qgbs' in ours.get((w, d), {})))

if __name__ == '__main__':
    main()
