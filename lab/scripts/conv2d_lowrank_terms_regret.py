#!/usr/bin/env python3
"""auto's regret on lowrank's rank-3 and rank-4 cells: scripts/conv2d_auto_grid.sh's terms3 and
terms4 kinds (lowrank alone, bench/results/NVIDIA_H100_80GB_HBM3.conv2d-lowrank-terms.json) beside
the other rows' times on the same shapes from the grid's random cells (their time does not depend
on the filter's values), each cell's pick replayed from tests/data/auto_picks.txt as it stands.

usage (from the repository root): lab/scripts/conv2d_lowrank_terms_regret.py TERMS_JSON"""
import json,re,sys
g=json.load(open('bench/results/NVIDIA_H100_80GB_HBM3.conv2d-auto-grid.json'))
t=json.load(open(sys.argv[1]))
rt={}
for r in g['rows']:
    if r['backend']=='cuda' and r.get('ms') and r.get('status')=='ok' and 'filter=' not in r['workload']:
        rt.setdefault(r['workload'],{})[r['variant'].split('/')[1]]=r['ms']
lists={}; picks={}
for line in open('tests/data/auto_picks.txt'):
    m=re.match(r'conv2d (L\d+) = (.*)',line)
    if m: lists[m.group(1)]=m.group(2).split()
    m=re.match(r'grid (terms\d) (\d+)\^2 (\d+)x(\d+): (L\d+)',line)
    if m: picks[(m.group(1),int(m.group(2)),int(m.group(3)),int(m.group(4)))]=m.group(5)
terms={}  # the terms file's own rows (lowrank, and walk where measured) by cell
for r in t['rows']:
    if r.get('ms'): terms.setdefault(r['workload'],{})[r['variant'].split('/')[1]]=r['ms']
over=[];n_=0;worst=0
for w,own in terms.items():
    m=re.match(r'rows=(\d+) cols=\d+ krows=(\d+) kcols=(\d+) pad=same filter=terms:(\d)',w)
    n,kr,kc,R=map(int,m.groups())
    if 'lowrank' not in own: continue
    cell=dict(rt[f"rows={n} cols={n} krows={kr} kcols={kc} pad=same"]); cell.update(own)
    best=min(cell.values())
    lst=lists[picks[(f"terms{R}",n,kr,kc)]]
    chose=next(v for v in lst if v in cell); reg=cell[chose]/best; n_+=1; worst=max(worst,reg)
    if reg>1.10: over.append((round(reg,2),f"terms{R} {n}^2 {kr}x{kc}",chose,round(cell[chose],4),min(cell,key=cell.get),round(best,4)))
print(f"{n_} cells, {len(over)} above 1.10, worst {worst:.2f}")
for o in sorted(over,reverse=True): print(o)
