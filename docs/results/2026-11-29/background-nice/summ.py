import json,sys
for f in sys.argv[1:]:
    for line in open(f):
        if not line.startswith('sustained: '): continue
        r=json.loads(line[len('sustained: '):])
        end=r.get('end',{})
        ex={k:end.get(k) for k in ('stall_micros','stopped_for_flush_micros','stopped_for_compaction_micros','delayed_micros') if k in end}
        print(f"{f:16} {r['engine']:8} V={r['value_size']:4} puts/s={r['mean_per_sec']:9.0f} p99={r['p99_ns']/1e3:7.1f}us p999={r['p999_ns']/1e3:7.1f}us max={r['max_ns']/1e6:7.1f}ms {ex}")
