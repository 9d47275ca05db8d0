#!/usr/bin/env python3
"""Emulates src/core/histogram_table.h's cell table with numpy float32 arithmetic and checks,
for many edge sets and cell counts, that every value's bin (an upper-bound search over the
edges) lies between its cell's first and last bins. Prints "ok"; an assertion names the
values that escape. Run: python3 lab/scripts/histogram_cell_table.py"""
import numpy as np
f32=np.float32
def cell(x, lo, cscale, last):
    with np.errstate(all='ignore'):
        g = (np.asarray(x,f32) - f32(lo)).astype(f32) * f32(cscale)
        g = g.astype(f32)
        w = np.where(np.isnan(g) | (g >= 2**23), 2**31, np.floor(np.where(np.isnan(g),0,np.minimum(g,2**24))))
    return np.minimum(w, last).astype(np.int64)
def build(e, cells):
    nb=len(e)-1; lo=e[0]; hi=e[nb]
    with np.errstate(all='ignore'):
        cscale=f32(f32(cells)/f32(hi-lo))
    first=np.zeros(cells,np.int64); lastb=np.full(cells,nb-1,np.int64)
    last=cells-1
    def below(v):
        return -1 if v<=lo else int(cell(np.nextafter(f32(v),f32(-np.inf)),lo,cscale,last))
    for i in range(nb):
        ff = 0 if i==0 else below(e[i])+1
        ft = cells-1 if i==nb-1 else below(e[i+1])
        lf = 0 if i==0 else int(cell(e[i],lo,cscale,last))
        lt = cells-1 if i==nb-1 else int(cell(e[i+1],lo,cscale,last))-1
        first[max(ff,0):ft+1]=i; lastb[lf:lt+1]=i
    return lo,hi,cscale,first,lastb
def lookup(x, e, tab):
    lo,hi,cscale,first,lastb=tab; nb=len(e)-1
    out=np.full(len(x),nb)
    ok=(x>=lo)&(x<=hi)
    c=cell(x[ok],lo,cscale,len(first)-1)
    a=first[c]; b=lastb[c]
    # exact search in [a,b]
    r=np.searchsorted(e[:nb],x[ok],side='right')-1
    assert np.all((r>=a)&(r<=np.maximum(a,b))), (x[ok][(r<a)|(r>np.maximum(a,b))][:5])
    out[ok]=r
    return out
rng=np.random.default_rng(1)
def cases():
    yield np.linspace(-1,1,257).astype(f32)
    yield np.sort(rng.uniform(-1,1,1025).astype(f32))
    yield np.sort(rng.standard_normal(1025).astype(f32)**3)
    yield np.array([0,1],f32)
    yield np.array([1,1,1,2,2,3],f32)
    yield np.array([-3e38,0,3e38],f32)
    yield np.array([-np.inf,0,np.inf],f32)
    yield np.linspace(1,1+1e-5,1001).astype(f32)   # bins narrower than spacing
    yield np.logspace(-30,30,200).astype(f32)
    yield np.array([0,1e-45,2e-45,1],f32)
    yield np.sort(np.concatenate([rng.uniform(0,1,50),[0.5]*20])).astype(f32)
for e in cases():
    nb=len(e)-1
    for cells in [1,2,7,8*nb,16384]:
        tab=build(e,cells)
        fin=e[np.isfinite(e)]
        xs=np.concatenate([e,np.nextafter(e,f32(np.inf)),np.nextafter(e,f32(-np.inf)),
            rng.uniform(fin.min(),fin.max(),20000).astype(f32), [np.nan,np.inf,-np.inf,0,-0.0]]).astype(f32)
        lookup(xs,e,tab)
print("ok")
