"""SOTA-391 and SOTA-392: a DPR-style dual encoder trained with in-batch negatives learns to retrieve (Karpukhin et al.
2020, §3.2); with per-device BN in its towers and each positive on its question's device it also learns to use the
batch channel (SOTA-364's generalisation to retrieval losses). The experiment is verify/retrieval.py."""

import numpy as np
import pytest

from verify.retrieval import run


def record(evidence, name, values, unit):
    evidence.metric(name, float(np.mean(values)), unit=unit, seeds=[float(v) for v in values])


@pytest.mark.claim("SOTA-391", "in-batch-learns")
def test_in_batch_negatives_train_a_retriever(evidence, seeds, device, experiment):
    """A LayerNorm dual encoder trained with in-batch negatives retrieves held-out passages far above an untrained one."""
    out = experiment(run, seeds, device)  # lists over replicas (seeds)
    record(evidence, "ln_recall1", out["ln_recall1"], "fraction")
    record(evidence, "untrained_recall1", out["untrained_recall1"], "fraction")
    record(evidence, "ln_in_batch_acc", out["ln_acc_aligned"], "fraction")
    record(evidence, "untrained_in_batch_acc", out["untrained_acc_aligned"], "fraction")
    evidence.metric("chance_recall1", out["chance"], unit="fraction")


@pytest.mark.claim("SOTA-392", "retrieval-leak")
def test_per_device_bn_dual_encoder_learns_the_batch_channel(evidence, seeds, device, experiment):
    """Training with the positive on its question's device teaches a per-device-BN dual encoder to read the channel."""
    out = experiment(run, seeds, device)
    a = {k: np.asarray(v) for k, v in out.items() if k != "chance"}
    margin = {n: a[f"{n}_acc_aligned"] - a[f"{n}_acc_resplit"] for n in ("aligned", "shuffled", "shuffled2", "ln")}
    record(evidence, "aligned_cheat_margin", margin["aligned"], "fraction")  # the channel's gain, open in training
    record(evidence, "shuffled_cheat_margin", margin["shuffled"], "fraction")  # ... closed in training (MoCo's shuffle)
    record(evidence, "ln_cheat_margin", margin["ln"], "fraction")  # no channel: 0 by construction
    record(evidence, "learned_cheat_margin", margin["aligned"] - margin["shuffled"], "fraction")
    record(evidence, "chance_cheat_margin", margin["shuffled2"] - margin["shuffled"], "fraction")  # same model, new batches
    for name in ("aligned", "shuffled", "global", "ln"):
        record(evidence, f"{name}_recall1", a[f"{name}_recall1"], "fraction")
        record(evidence, f"{name}_in_batch_acc", a[f"{name}_acc_aligned"], "fraction")
    record(evidence, "untrained_recall1", a["untrained_recall1"], "fraction")
    record(evidence, "recall_cost", a["shuffled_recall1"] - a["aligned_recall1"], "fraction")  # > 0: the leak costs
    record(evidence, "chance_recall_cost", a["shuffled_recall1"] - a["shuffled2_recall1"], "fraction")
