"""One line per profiled kernel of the Nsight Compute logs in a directory (the fa4-* and flamia-*
logs of bench/device-profile-fa4.sh): duration, tensor-pipe activity, issue-slot use, executed
instructions (all, and on the XU pipe: ex2 and the like), DRAM, L2 hit rate, launch shape and the
four largest stall reasons. Usage: python3 bench/ncu-summary.py DIR
"""
import re, sys, glob, os
want = {
 'dur': r'gpu__time_duration.sum\s+\S+\s+([\d.,]+)',
 'tensor': r'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active\s+%\s+([\d.]+)',
 'issue': r'Issue Slots Busy\s+%\s+([\d.]+)',
 'noelig': r'No Eligible\s+%\s+([\d.]+)',
 'cpi': r'Warp Cycles Per Issued Instruction\s+cycle\s+([\d.]+)',
 'inst': r'sm__inst_executed.sum\s+inst\s+([\d,]+)',
 'xu': r'smsp__inst_executed_pipe_xu.sum\s+inst\s+([\d,]+)',
 'dram': r'DRAM Throughput\s+%\s+([\d.]+)',
 'l2hit': r'L2 Hit Rate\s+%\s+([\d.]+)',
 'regs': r'Registers Per Thread\s+register/thread\s+(\d+)',
 'block': r'Block Size\s+(\d[\d,]*)',
 'grid': r'Grid Size\s+([\d,]+)',
 'smem': r'Dynamic Shared Memory Per Block\s+Kbyte/block\s+([\d.]+)',
 'occ': r'Achieved Occupancy\s+%\s+([\d.]+)',
}
stalls = re.compile(r'smsp__average_warps_issue_stalled_(\w+?)_per_issue_active.ratio\s+inst\s+([\d.]+)')
os.chdir(sys.argv[1] if len(sys.argv) > 1 else '.')
for f in sorted(glob.glob('*.log')):
    if not (f.startswith('fa4') or f.startswith('flamia')): continue
    text = open(f).read()
    parts = re.split(r'\n  (\S+) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context', text)
    for i in range(1, len(parts), 2):
        name, body = parts[i], parts[i+1]
        if 'Fill' in name or 'elementwise' in name: continue
        r = {k: (m.group(1) if (m := re.search(p, body)) else '-') for k, p in want.items()}
        st = sorted(((float(v), k) for k, v in stalls.findall(body) if k != 'selected'), reverse=True)[:4]
        short = re.sub(r'kernel_cutlass_kernel_flash_attncute', '', name)[:40]
        print(f, short, ' '.join(f'{k}={v}' for k, v in r.items()), '| stalls', ', '.join(f'{k} {v}' for v, k in st))
