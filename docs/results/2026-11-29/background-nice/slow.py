# Slow puts (>= 5 ms) of a timer-build run: how many, how many spent under 100 us on a CPU,
# and in which part of the write path the time went.
import re,sys
for f in sys.argv[1:]:
  # Each run's lines end with its `sustained:` result line.
  segs=[[]]
  for l in open(f).read().splitlines():
    if l.startswith('sustained: '):
        import json; segs[-1].append(('V', json.loads(l[11:])['value_size'])); segs.append([])
    else: segs[-1].append(l)
  for seg in segs[:-1]:
    V=[x for x in seg if isinstance(x,tuple)][0][1]
    lines=[x for x in seg if isinstance(x,str)]
    rows=[]
    a=[l for l in lines if l.startswith('SLOWPUT ')]; b=[l for l in lines if l.startswith('SLOWPUT2 ')]
    for x,y in zip(a,b):
        d=dict(kv.split('=',1) for kv in (x+' '+y).split() if '=' in kv and not kv.startswith('thread'))
        rows.append({k:int(v) for k,v in d.items()})
    if not rows: print(f, V, 0); continue
    off=sum(1 for r in rows if r.get('cpu',0)<100)
    parts={'waiting for the lead':'lead_wait','pace sleep':'pace_sleep','WAL write':'wal','memtable switch':'switch','stop':'stop_wait'}
    where={}
    for r in rows:
        big=max(['lead_wait','pace_sleep','wal','switch','stop_wait','drop'],key=lambda k:r.get(k,0))
        if big!='wal' and big!='drop' and r['commit']-r['wal']-r.get('drop',0) > r.get(big,0): big='memtable insert'
        where[big]=where.get(big,0)+1
    print(f"{f} V={V}: {len(rows)} puts >= 5 ms, longest {max(r['total_us'] for r in rows)/1000:.1f} ms; on a CPU < 100 us: {off}; largest part: {where}")
