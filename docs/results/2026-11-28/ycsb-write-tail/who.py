import re,sys,collections
tids=set(int(x) for x in sys.argv[2].split(','))
ev=[]
for line in open(sys.argv[1]):
    m=re.match(r'\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)',line)
    if m and m.group(5).endswith('sched_switch'): ev.append((float(m.group(4)),m.group(6)))
ev.sort(); out={}; c=collections.Counter()
for t,tr in ev:
    pp=int(re.search(r'prev_pid=(\d+)',tr).group(1)); np_=int(re.search(r'next_pid=(\d+)',tr).group(1))
    st=re.search(r'prev_state=(\S+)',tr).group(1); nc=re.search(r'next_comm=(.*?) next_pid',tr).group(1)
    if pp in tids and st.startswith('R'): out[pp]=(t,nc+'/'+str(np_))
    if np_ in tids and np_ in out:
        t0,w=out.pop(np_)
        if t-t0>0.001: c[w]+=1
print(c.most_common(6))
