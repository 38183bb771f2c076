import sys,collections
tids=set(sys.argv[2].split(','))
c=collections.Counter(); tot=collections.Counter()
for line in open(sys.argv[1]):
    if not line.startswith('WT '): continue
    f=line.split()
    if f[1] not in tids: continue
    kv=dict(x.split('=',1) for x in f[4:] if '=' in x)
    st={k:int(v) for k,v in kv.items()}
    total=st['total']
    stages={k:v for k,v in st.items() if k not in ('total','cpu','vcsw','ivcsw')}
    big=max(stages,key=stages.get)
    kind=f[3][0]+':'+big+(':slept' if st['vcsw'] else '')+(':preempted' if st['ivcsw'] else '')
    c[kind]+=1; tot[kind]+=total
for k,v in c.most_common(): print(v, k, 'sum_ms=%.1f'%(tot[k]/1000))
