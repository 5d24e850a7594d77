import os, sys, time, torch
sys.path.insert(0, os.path.dirname(__file__))
from prep import graphs_for
from docgraph.batching.sampler import TokenBudgetBatchSampler
from docgraph.batching.loader import iterate_batches
torch.set_num_threads(1)
tagger, graphs = graphs_for(sys.argv[1])
m = tagger.model.eval()
sampler = TokenBudgetBatchSampler([int(g.num_nodes) for g in graphs], tagger.batch_tokens, shuffle=False)
first = again = 0
with torch.no_grad():
    for i, (idx, batch) in enumerate(iterate_batches(graphs, sampler, torch.device("cpu"), m)):
        t = time.process_time(); m.predict(batch); a = time.process_time() - t
        t = time.process_time(); m.predict(batch); b = time.process_time() - t
        first += a; again += b
        print(i, f"{a:.3f} {b:.3f}", flush=True)
print("first", first, "again", again)
