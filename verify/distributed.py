"""Small torch.distributed toolkit for verifiers: spawn N ranks, a global batch norm, shuffle BN, collective counting.

- `run_distributed(fn, world_size, *args)` spawns `world_size` processes (start method 'spawn'), initialises a process
  group (gloo on CPU; NCCL when the device is CUDA and there is one GPU per rank, otherwise gloo, which also accepts
  CUDA tensors) on MASTER_ADDR=127.0.0.1 and a free port, calls `fn(rank, world_size, *args)` in every rank and returns
  the list of per-rank return values (picklable; move tensors to CPU first).
- `GlobalBatchNorm`: batch norm whose mean/var are computed over the batch of all ranks (SimCLR arXiv 2002.05709 §2.2
  "Global BN"). torch.nn.SyncBatchNorm refuses CPU tensors, so this is written out: one all_reduce of
  [sum, sum of squares, count] per forward, and (through `AllReduceSum`) one all_reduce of its gradient per backward,
  so input and weight gradients equal those of one nn.BatchNorm over the concatenated batch.
- `batch_shuffle_ddp` / `batch_unshuffle_ddp`: Shuffle BN as MoCo arXiv 1911.05722 §3.3 and facebookresearch/moco
  moco/builder.py (`_batch_shuffle_ddp`, `_batch_unshuffle_ddp`, `concat_all_gather`) do it.
- `CollectiveCounter`: context manager that wraps torch.distributed collectives and records calls and bytes.
"""

import os
import socket
import tempfile
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

# ----------------------------------------------------------------------------------------------------------------------
# spawning


def free_port():
    """A TCP port that was free a moment ago on 127.0.0.1 (bind to port 0 and read it back)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pick_backend(device, world_size):
    """NCCL needs one GPU per rank; otherwise gloo (CPU tensors, and CUDA tensors for all_reduce/broadcast/all_gather)."""
    device = torch.device(device)
    if device.type == "cuda" and dist.is_nccl_available() and torch.cuda.device_count() >= world_size:
        return "nccl"
    return "gloo"


def rank_device(device, rank, backend):
    """The device a rank puts its tensors on: cuda:<rank> with NCCL, the given device otherwise."""
    device = torch.device(device)
    if device.type == "cuda" and backend == "nccl":
        return torch.device("cuda", rank)
    return device


def _entry(rank, world_size, port, backend, fn, args, out_dir):
    """Body of one spawned rank: init the group, run fn, write its return value (or traceback) to out_dir/rank.pt."""
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback only: never pick a routable interface
    result = {"ok": False}
    try:
        dist.init_process_group(backend, rank=rank, world_size=world_size)
        try:
            result = {"ok": True, "value": fn(rank, world_size, *args)}
        finally:
            dist.destroy_process_group()
    except BaseException:  # noqa: BLE001 -- reported to the parent with its traceback
        result = {"ok": False, "error": traceback.format_exc()}
    torch.save(result, os.path.join(out_dir, f"{rank}.pt"))


def run_distributed(fn, world_size, *args, backend="gloo", timeout_s=120.0, tries=2):
    """Run fn(rank, world_size, *args) in world_size spawned processes; return [value of rank 0, value of rank 1, ...].

    fn must be importable (module-level). Retries once with a new port if the first attempt fails to start
    (a port taken between `free_port` and the rendezvous).
    """
    last_error = None
    for _ in range(tries):
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="assay_dist_") as out_dir:
            ctx = mp.get_context("spawn")
            procs = [
                ctx.Process(target=_entry, args=(r, world_size, port, backend, fn, args, out_dir), daemon=False)
                for r in range(world_size)
            ]
            for p in procs:
                p.start()
            for p in procs:
                p.join(timeout_s)
            for p in procs:
                if p.is_alive():  # a hung rendezvous: end only the processes started here
                    p.kill()
                    p.join()
            results = []
            for r in range(world_size):
                path = os.path.join(out_dir, f"{r}.pt")
                if os.path.exists(path):
                    results.append(torch.load(path, weights_only=False))
                else:
                    results.append({"ok": False, "error": f"rank {r} wrote no result (exit code {procs[r].exitcode})"})
        if all(res["ok"] for res in results):
            return [res["value"] for res in results]
        last_error = "\n".join(f"rank {r}: {res.get('error')}" for r, res in enumerate(results) if not res["ok"])
        if "EADDRINUSE" not in last_error and "address already in use" not in last_error.lower():
            break
    raise RuntimeError(f"distributed run failed:\n{last_error}")


# ----------------------------------------------------------------------------------------------------------------------
# global batch norm


class AllReduceSum(torch.autograd.Function):
    """y = sum over ranks of x; dL/dx = sum over ranks of dL/dy (every rank's loss depends on y)."""

    @staticmethod
    def forward(ctx, x):
        y = x.clone(memory_format=torch.contiguous_format)
        dist.all_reduce(y, op=dist.ReduceOp.SUM)  # forward: one collective
        return y

    @staticmethod
    def backward(ctx, grad_y):
        grad_x = grad_y.clone(memory_format=torch.contiguous_format)
        dist.all_reduce(grad_x, op=dist.ReduceOp.SUM)  # backward: one collective
        return grad_x


def all_reduce_sum(x):
    """Differentiable all_reduce(SUM); the identity when torch.distributed is not initialised."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return AllReduceSum.apply(x)
    return x


class GlobalBatchNorm(nn.Module):
    """Batch norm over the union of all ranks' batches (SimCLR arXiv 2002.05709 §2.2: "aggregating BN mean and
    variance over all devices"). Input N x C x * (channel dim 1), like nn.BatchNorm1d/2d/3d; same parameters,
    buffers and update rule (running var uses the unbiased variance of the GLOBAL batch)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        shape = [1, -1] + [1] * (x.dim() - 2)  # broadcast C over N x C x *
        if not self.training:
            mean, var = self.running_mean, self.running_var
        else:
            dims = [0] + list(range(2, x.dim()))  # reduce over batch and spatial dims
            count = torch.tensor([x.numel() / x.shape[1]], dtype=x.dtype, device=x.device)  # local N*H*W
            stats = torch.cat([x.sum(dims), (x * x).sum(dims), count])  # 2C+1 local sums
            stats = all_reduce_sum(stats)  # 2C+1 global sums: the one synchronisation per BN layer
            s1, s2, n = stats[: self.num_features], stats[self.num_features : -1], stats[-1]
            mean = s1 / n  # C: global mean
            var = (s2 / n - mean * mean).clamp_min(0.0)  # C: global biased variance (used to normalise)
            with torch.no_grad():  # running stats as nn.BatchNorm: unbiased variance, momentum update
                self.num_batches_tracked += 1
                unbiased = var * n / (n - 1).clamp_min(1.0)
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean.detach())
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * unbiased.detach())
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.weight is not None:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y


# ----------------------------------------------------------------------------------------------------------------------
# shuffle BN (MoCo)


@torch.no_grad()
def concat_all_gather(t):
    """facebookresearch/moco builder.py concat_all_gather: all_gather along dim 0 (no gradient)."""
    parts = [torch.ones_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t, async_op=False)
    return torch.cat(parts, dim=0)


@torch.no_grad()
def batch_shuffle_ddp(x, generator=None):
    """MoCo §3.3 / builder.py _batch_shuffle_ddp: gather keys, rank 0's randperm broadcast, each rank takes a slice."""
    n_this = x.shape[0]
    x_gather = concat_all_gather(x)  # N_all x ...
    n_all = x_gather.shape[0]
    world = n_all // n_this
    idx_shuffle = torch.randperm(n_all, generator=generator).to(x.device)  # N_all, drawn on every rank...
    dist.broadcast(idx_shuffle, src=0)  # ...but rank 0's permutation is the one used
    idx_unshuffle = torch.argsort(idx_shuffle)  # N_all: inverse permutation
    idx_this = idx_shuffle.view(world, -1)[dist.get_rank()]  # n_this: the keys this rank encodes
    return x_gather[idx_this], idx_unshuffle


@torch.no_grad()
def batch_unshuffle_ddp(x, idx_unshuffle):
    """MoCo builder.py _batch_unshuffle_ddp: gather encoded keys and take this rank's slice in the original order."""
    n_this = x.shape[0]
    x_gather = concat_all_gather(x)  # N_all x D
    world = x_gather.shape[0] // n_this
    idx_this = idx_unshuffle.view(world, -1)[dist.get_rank()]  # n_this
    return x_gather[idx_this]


# ----------------------------------------------------------------------------------------------------------------------
# counting collectives


def _tensor_bytes(t):
    if isinstance(t, torch.Tensor):
        return t.numel() * t.element_size()
    if isinstance(t, (list, tuple)):
        return sum(_tensor_bytes(u) for u in t)
    return 0


class CollectiveCounter:
    """Wraps torch.distributed collectives while active; records (name, bytes) per call made by this rank.

    Bytes are this rank's payload: the tensor it contributes (all_reduce, broadcast, reduce: the tensor; all_gather:
    its input tensor). Wire traffic per rank is a constant multiple of this for a given algorithm and world size.
    Code must call the collectives as attributes of torch.distributed (`dist.all_reduce(...)`), as everything here does.
    """

    NAMES = (
        "all_reduce",
        "all_gather",
        "all_gather_into_tensor",
        "broadcast",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "all_to_all",
        "all_to_all_single",
        "barrier",
    )
    PAYLOAD_ARG = {"all_gather": 1, "all_gather_into_tensor": 1}  # which positional argument is this rank's payload

    def __init__(self):
        self.calls = []  # [(name, bytes)]
        self._saved = {}

    def _wrap(self, name, fn):
        def counted(*args, **kwargs):
            i = self.PAYLOAD_ARG.get(name, 0)
            payload = args[i] if len(args) > i else kwargs.get("tensor", kwargs.get("input_tensor"))
            self.calls.append((name, _tensor_bytes(payload)))
            return fn(*args, **kwargs)

        return counted

    def __enter__(self):
        for name in self.NAMES:
            if hasattr(dist, name):
                self._saved[name] = getattr(dist, name)
                setattr(dist, name, self._wrap(name, self._saved[name]))
        return self

    def __exit__(self, *exc):
        for name, fn in self._saved.items():
            setattr(dist, name, fn)
        self._saved = {}
        return False

    def reset(self):
        self.calls = []

    @property
    def n_calls(self):
        return len(self.calls)

    @property
    def n_bytes(self):
        return sum(b for _, b in self.calls)
