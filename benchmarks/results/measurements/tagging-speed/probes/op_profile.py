import os, sys, time, torch, collections
sys.path.insert(0, os.path.dirname(__file__))
from prep import graphs_for
from docgraph.tagging.inference import predict_graphs
torch.set_num_threads(1)
model = sys.argv[1]
tagger, graphs = graphs_for(model)
predict_graphs(tagger.model, graphs[:5], tagger.vocabs, tagger.batch_tokens)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    predict_graphs(tagger.model, graphs[:40], tagger.vocabs, tagger.batch_tokens)
agg = collections.defaultdict(lambda: [0.0, 0])
def key(e):
    shapes = e.input_shapes
    if e.key == "aten::mkldnn_rnn_layer":
        return (e.key, f"in={shapes[0][-1] if shapes and shapes[0] else '?'} h={shapes[5][-1] if len(shapes)>5 and shapes[5] else '?'}")
    if e.key in ("aten::mm", "aten::addmm"):
        s = [x for x in shapes if x]
        return (e.key, str([x[-1] for x in s]))
    return (e.key, "")
for e in prof.key_averages(group_by_input_shape=True):
    k = key(e)
    agg[k][0] += e.self_cpu_time_total / 1e3
    agg[k][1] += e.count
tot = sum(v[0] for v in agg.values())
for k, v in sorted(agg.items(), key=lambda kv: -kv[1][0])[:35]:
    print(f"{k[0]:<28}{k[1]:<30}{v[0]:9.1f} ms {100*v[0]/tot:5.1f}% {v[1]:6d}")
print("total", tot)
