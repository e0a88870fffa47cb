"""The blog's training and evaluation protocol as its code runs it (Perschewski 2021, deep-learning-blog-code
information_leakage_in_batch_normalization.ipynb at 27d5178, cell 6), over the vectorised grid of verify.sequences.

Where `verify.sequences.train_grid` draws N random sequence batches per step and evaluates with the running
statistics as training left them, this follows the notebook line by line:
- training: `DataLoader(ds, batch_size=N, shuffle=True, drop_last=True)`, a fresh permutation per epoch, Adam with its
  defaults; 1000 steps (the post's text; the notebook rounds up to whole epochs, a recorded discrepancy);
- evaluation: one more epoch of that loader; for each batch a train-mode forward (batch statistics; it also updates
  the running statistics, as `model.train(True); model(x)` does) and then an eval-mode forward with the running
  statistics just updated; each loss averaged over the epoch's batches;
- classification: "cheating" when the mean train-mode loss is strictly below the mean eval-mode loss (cells 7-8).

Shapes: M = models in a bucket, B = sequence batches of a model's data set, Nmax = the bucket's largest N,
S = Nmax * E samples, T = input positions.
"""

import torch

from verify.sequences import L_GROUPS, N_GROUPS, Bucket, blog_function, sequence_batches


class EpochSampler:
    """Per-model shuffled epochs over its B sequence batches in batches of N, dropping the last incomplete batch
    (torch DataLoader(shuffle=True, drop_last=True)); one generator draws every permutation."""

    def __init__(self, bucket, generator):
        self.bucket, self.g = bucket, generator
        self.ns = [N for _, _, N in bucket.specs]
        self.per_epoch = [int(b) // n for b, n in zip(bucket.n_seq, self.ns)]  # batches per epoch, M
        self.perm = [self._permutation(m) for m in range(len(self.ns))]
        self.pos = [0] * len(self.ns)

    def _permutation(self, m):
        return torch.randperm(int(self.bucket.n_seq[m]), generator=self.g)

    def next_indices(self):
        """The next batch of every model: indices M x Nmax (slots past a model's N repeat its first index; masked)."""
        rows = []
        for m, n in enumerate(self.ns):
            if self.pos[m] == self.per_epoch[m]:  # epoch over: the loader reshuffles
                self.perm[m], self.pos[m] = self._permutation(m), 0
            take = self.perm[m][self.pos[m] * n : (self.pos[m] + 1) * n]  # N sequence batches
            self.pos[m] += 1
            rows.append(torch.cat([take, take[:1].expand(self.bucket.n_max - n)]))
        return torch.stack(rows).to(self.bucket.X.device)  # M x Nmax

    def batch(self):
        """Inputs M x 1 x S x T and targets M x 1 x S of the next batch (the layout of Bucket.draw)."""
        b, idx = self.bucket, self.next_indices()
        rows = torch.arange(len(self.ns), device=b.X.device)[:, None]
        x = b.X[rows, idx].reshape(len(self.ns), 1, -1, b.T)  # M x 1 x S x T
        y = b.Y[rows, idx].reshape(len(self.ns), 1, -1)  # M x 1 x S
        return x, y


def evaluate_epoch(bucket, generator):
    """Notebook cell 6, 'testing': one epoch of the training loader; per batch, train mode (updating the running
    statistics) then eval mode. Returns mean train-mode and eval-mode MSE per model, M each."""
    sampler = EpochSampler(bucket, generator)
    per_epoch = torch.tensor(sampler.per_epoch, dtype=torch.float32)  # M
    tr_sum, ev_sum = torch.zeros(len(per_epoch)), torch.zeros(len(per_epoch))
    with torch.no_grad():
        for it in range(max(sampler.per_epoch)):
            x, y = sampler.batch()  # models whose epoch is over draw from a new one; their losses are not counted
            counted = (it < per_epoch).float()  # M
            tr = bucket.mse(bucket.forward(x, train=True, update_stats=True), y)[:, 0].cpu()  # M
            ev = bucket.mse(bucket.forward(x, train=False), y)[:, 0].cpu()  # M
            tr_sum += counted * tr
            ev_sum += counted * ev
    return tr_sum / per_epoch, ev_sum / per_epoch


def build_replicated(seq_lens, batch_sizes, modes, replicas, seed, device):
    """verify.sequences.build_grid with `replicas` independent models per (mode, L, N) (own initialisation and
    batches: the seeds), packed into the same buckets; specs within a bucket are replica-major."""
    g = torch.Generator().manual_seed(seed)
    f = blog_function(device=device)  # blog §The Data: 1000 points of sin x + 2 cos 0.5x on [0, 2 pi]
    datasets = {(mode, L): sequence_batches(f, L, mode, g) for mode in modes for L in seq_lens}  # shared over N
    buckets = []
    for l_lo, l_hi in L_GROUPS:
        for n_lo, n_hi in N_GROUPS:
            specs = [
                (mode, L, N)
                for _ in range(replicas)
                for mode in modes
                for L in seq_lens
                for N in batch_sizes
                if l_lo <= L <= l_hi and n_lo <= N <= n_hi
            ]
            if specs:
                buckets.append(Bucket(specs, datasets, g, device))
    return buckets, g


def train_blog_protocol(seq_lens, batch_sizes, modes, steps, seed, device, replicas=1):
    """Train `replicas` blog models per (mode, L, N) with the notebook's loader and evaluate them as the notebook
    does. Returns {"train_loss", "eval_loss"}: tensors replicas x n_modes x n_L x n_N."""
    buckets, g = build_replicated(seq_lens, batch_sizes, modes, replicas, seed, device)
    samplers = [EpochSampler(b, g) for b in buckets]
    opt = torch.optim.Adam([t for b in buckets for t in b.parameters()])  # notebook: torch.optim.Adam(model.parameters())
    for _ in range(steps):
        loss = 0.0
        for b, s in zip(buckets, samplers):
            x, y = s.batch()  # M x 1 x S x T, M x 1 x S
            loss = loss + b.mse(b.forward(x, train=True, update_stats=True), y).sum()  # models independent: sum
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    shape = (replicas, len(modes), len(seq_lens), len(batch_sizes))
    out = {k: torch.zeros(shape) for k in ("train_loss", "eval_loss")}
    for b in buckets:
        tr, ev = evaluate_epoch(b, g)
        per_replica = len(b.specs) // replicas
        for m, (mode, L, N) in enumerate(b.specs):
            at = (m // per_replica, modes.index(mode), list(seq_lens).index(L), list(batch_sizes).index(N))
            out["train_loss"][at], out["eval_loss"][at] = tr[m], ev[m]
    return out
