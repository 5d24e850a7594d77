import os, sys, collections, numpy as np, torch
sys.path.insert(0, os.path.dirname(__file__))
from prep import graphs_for
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.batching.plan import plan_batch
from docgraph.nn.layout import ShapeGrid
from torch_geometric.data import Batch
tagger, graphs = graphs_for(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 100)
cfg = tagger.model.config
sampler = list(TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], tagger.batch_tokens, shuffle=False))
batches = [Batch.from_data_list([graphs[i] for i in idx]) for idx in sampler]
def calls(plan):
    out = []
    for dims, lay in (("char", plan.chars.layout), ("cur", plan.sentences), ("prev", plan.previous.layout), ("next", plan.next.layout), ("ctx", plan.sentences), ("mc", plan.monte_carlo)):
        d = {"prev": "cur", "next": "cur"}.get(dims, dims)
        for b in lay.buckets:
            out.append((d, b.forward_index.shape[0], b.steps))
    return out
def sim(grid, buckets, cap):
    cache = collections.OrderedDict(); hits = miss = 0; work = real = 0
    for batch in batches:
        plan = plan_batch(batch, cfg, buckets, torch.float32, grid)
        for key in calls(plan):
            work += key[1] * key[2] * {'char': 32e3, 'cur': 360e3, 'ctx': 1.04e6, 'mc': 200e3}[key[0]] * 2
            if key in cache: hits += 1; cache.move_to_end(key)
            else:
                miss += 1; cache[key] = 1
                if len(cache) > cap: cache.popitem(last=False)
    return hits, miss, work
def est(h, m, w): return w / 150e9 + m * 0.003
base = sim(None, 6, 64)
print("base", base, f"est {est(*base):.2f}")

for sq, cs, rq, mr, b, cap in [(8,64,8,512,6,64),(8,64,8,128,6,64),(8,64,8,256,6,64),(8,64,16,512,6,64),(8,64,8,512,4,64)]:
    h, m, w = sim(ShapeGrid(sq, cs, rq, mr), b, cap)
    print(sq, cs, rq, mr, b, cap, "hits", h, "miss", m, f"work {w/base[2]:.3f} est {est(h,m,w):.2f}")
