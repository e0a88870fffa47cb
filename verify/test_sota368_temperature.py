"""SOTA-368: in NT-Xent the l2-normalised similarity plus temperature weighs each negative by its relative hardness
(softmax share), concentrating on the hardest as tau drops; NT-Logistic and Margin Triplet do not (SimCLR §5.1, Table 2)."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

TAUS = (0.05, 0.1, 0.5, 1.0)  # SimCLR Table 5 temperatures
SEED = 0


def neg_nt_xent(u, vp, vn, tau):
    """SimCLR Table 2 'negative loss' of NT-Xent: u.v+/tau - log sum_{v in {v+, v-}} exp(u.v/tau)."""
    logits = torch.cat([(u @ vp)[None], vn @ u]) / tau  # (1+K), positive first
    return logits[0] - torch.logsumexp(logits, dim=0)


def neg_nt_logistic(u, vp, vn, tau):
    """SimCLR Table 2 NT-Logistic, summed over the K negatives: log s(u.v+/tau) + sum_k log s(-u.v-_k/tau)."""
    return F.logsigmoid(u @ vp / tau) + F.logsigmoid(-(vn @ u) / tau).sum()


def neg_margin_triplet(u, vp, vn, m):
    """SimCLR Table 2 Margin Triplet, summed over the K negatives: -sum_k max(u.v-_k - u.v+ + m, 0)."""
    return -torch.clamp(vn @ u - u @ vp + m, min=0).sum()


def table2_grad_nt_xent(u, vp, vn, tau):
    """Table 2: (1 - exp(u.v+/tau)/Z(u))/tau v+ - sum_{v-} exp(u.v-/tau)/Z(u)/tau v-; returns (gradient, negative weights)."""
    z = torch.exp(u @ vp / tau) + torch.exp(vn @ u / tau).sum()  # Z(u) over positive and K negatives
    w_neg = torch.exp(vn @ u / tau) / z  # K, softmax share of each negative = its relative hardness
    return (1 - torch.exp(u @ vp / tau) / z) / tau * vp - (w_neg / tau) @ vn, w_neg


def table2_grad_nt_logistic(u, vp, vn, tau):
    """Table 2: s(-u.v+/tau)/tau v+ - s(u.v-/tau)/tau v- (summed over negatives); returns (gradient, negative weights)."""
    w_neg = torch.sigmoid(vn @ u / tau)  # K, depends only on that negative's own similarity
    return torch.sigmoid(-(u @ vp) / tau) / tau * vp - (w_neg / tau) @ vn, w_neg


def table2_grad_margin(u, vp, vn, m):
    """Table 2: v+ - v- if u.v+ - u.v- < m else 0 (summed over negatives); returns (gradient, negative weights)."""
    w_neg = (u @ vp - vn @ u < m).to(u.dtype)  # K, indicator: inside the margin or not
    return w_neg.sum() * vp - w_neg @ vn, w_neg


def make_anchor_batch(g, d, k, dtype, device):
    """Unit anchor u, a positive near u, and K negatives whose cosine to u spreads over about [-0.3, 0.8]."""
    u = F.normalize(torch.randn(d, generator=g, dtype=dtype), dim=0)  # d
    vp = F.normalize(u + 0.5 * torch.randn(d, generator=g, dtype=dtype) / math.sqrt(d), dim=0)  # d, cos ~ 0.9
    alpha = torch.rand(k, generator=g, dtype=dtype) * 1.1 - 0.3  # K target cosines
    noise = F.normalize(torch.randn(k, d, generator=g, dtype=dtype), dim=1)  # K x d
    noise = F.normalize(noise - (noise @ u)[:, None] * u, dim=1)  # K x d, orthogonal to u
    vn = alpha[:, None] * u + torch.sqrt(1 - alpha**2)[:, None] * noise  # K x d, unit norm, cos(u, v-_k) = alpha_k
    return u.to(device), vp.to(device), vn.to(device)


def _autograd(fn, u, *args):
    """Gradient of fn w.r.t. the (already l2-normalised) anchor u, as Table 2 writes it."""
    u = u.detach().clone().requires_grad_(True)
    (gu,) = torch.autograd.grad(fn(u, *args), u)
    return gu


def table2_autograd_errors(g, d, k, margin, dt, device):
    """Largest |Table 2 gradient - autograd| of each loss over 5 random batches and TAUS, and of NT-Xent's gradient
    carried through the l2 normalisation."""
    err = {"nt_xent": 0.0, "nt_logistic": 0.0, "margin": 0.0}
    err_through_norm = 0.0
    for trial in range(5):
        u, vp, vn = make_anchor_batch(g, d, k, dt, device)  # d, d, K x d
        for tau in TAUS:
            gap = _autograd(neg_nt_xent, u, vp, vn, tau) - table2_grad_nt_xent(u, vp, vn, tau)[0]  # d
            err["nt_xent"] = max(err["nt_xent"], gap.abs().max().item())
            gap = _autograd(neg_nt_logistic, u, vp, vn, tau) - table2_grad_nt_logistic(u, vp, vn, tau)[0]  # d
            err["nt_logistic"] = max(err["nt_logistic"], gap.abs().max().item())
        gap = _autograd(neg_margin_triplet, u, vp, vn, margin) - table2_grad_margin(u, vp, vn, margin)[0]  # d
        err["margin"] = max(err["margin"], gap.abs().max().item())
        # through the normalisation u = x/||x||, the same gradient is projected on the tangent plane: (I - u u^T) g / ||x||
        x = (3.0 * u).detach().requires_grad_(True)  # d, un-normalised encoder output
        (gx,) = torch.autograd.grad(neg_nt_xent(F.normalize(x, dim=0), vp, vn, 0.1), x)  # d
        gu = table2_grad_nt_xent(u, vp, vn, 0.1)[0]  # d
        err_through_norm = max(err_through_norm, (gx - (gu - (gu @ u) * u) / 3.0).abs().max().item())
    return err, err_through_norm


def hardest_share_and_entropy(u, vp, vn, hardest, tau, k):
    """NT-Xent's and NT-Logistic's negative weights at tau as distributions over the K negatives: the hardest
    negative's share and the normalised entropy (in [0, 1]) of each, as (xent share, xent entropy, logistic share,
    logistic entropy)."""
    w_x = table2_grad_nt_xent(u, vp, vn, tau)[1]  # K
    w_l = table2_grad_nt_logistic(u, vp, vn, tau)[1]  # K
    p_x, p_l = w_x / w_x.sum(), w_l / w_l.sum()  # K, weights as a distribution over negatives
    ent_x = -(p_x * torch.log(p_x.clamp_min(1e-300))).sum().item() / math.log(k)  # normalised entropy in [0, 1]
    ent_l = -(p_l * torch.log(p_l.clamp_min(1e-300))).sum().item() / math.log(k)
    return p_x[hardest].item(), ent_x, p_l[hardest].item(), ent_l


def other_weights_shift(u, vp, vn, extra, k, margin, tau=0.1):
    """Largest relative change of the K existing negatives' weights when the hard negative `extra` joins, per loss."""
    vn2 = torch.cat([vn, extra[None]])  # (K+1) x d
    shift = {}
    for name, fn, arg in (
        ("nt_xent", table2_grad_nt_xent, tau),
        ("nt_logistic", table2_grad_nt_logistic, tau),
        ("margin", table2_grad_margin, margin),
    ):
        w_before = fn(u, vp, vn, arg)[1]  # K
        w_after = fn(u, vp, vn2, arg)[1][:k]  # K, same negatives, with the hard one present
        rel = (w_after - w_before).abs() / w_before.abs().clamp_min(1e-300)  # K
        shift[name] = rel.max().item() if w_before.abs().max() > 0 else 0.0
    return shift


def hardest_share_figure(rows, k):
    """The hardest negative's share of the weights against tau, NT-Xent and NT-Logistic (rows[tau]: 4 numbers)."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(TAUS, [rows[t][0] for t in TAUS], "o-", label="NT-Xent: hardest negative's share")
    ax.plot(TAUS, [rows[t][2] for t in TAUS], "s-", label="NT-Logistic: hardest negative's share")
    ax.axhline(1.0 / k, ls=":", color="grey", label="uniform 1/K")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("temperature tau")
    ax.set_ylabel("share of the negatives' gradient weight")
    ax.legend(fontsize=7)
    return fig


@pytest.mark.claim("SOTA-368", "nt-xent-gradient")
def test_nt_xent_gradient_weighs_negatives_by_relative_hardness(evidence, device):
    """Table 2's three gradients match autograd; NT-Xent's negative weights are softmax shares that concentrate on the
    hardest negative as tau drops and shift when a harder negative joins; logistic/margin weights do not."""
    # Long on purpose: the three numbered parts are one argument (Table 2's formulas hold, then what their weights do),
    # each part's computation is a helper above and what stays here is the metrics in the order the claim reads them.
    g = torch.Generator().manual_seed(SEED)
    d, k, margin = 128, 255, 0.5
    dt = torch.float64

    # 1) Table 2 formulas vs autograd, over several random batches and temperatures (float64)
    err, err_through_norm = table2_autograd_errors(g, d, k, margin, dt, device)
    for name, e in err.items():
        evidence.metric(f"{name}_grad_max_abs_err", e)
    evidence.metric("nt_xent_grad_through_norm_max_abs_err", err_through_norm)

    # 2) concentration on the hardest negative as tau drops (same batch for every tau)
    u, vp, vn = make_anchor_batch(g, d, k, dt, device)  # d, d, K x d
    hardest = torch.argmax(vn @ u)  # index of the negative most similar to u
    rows = {}
    for tau in TAUS:
        tag = str(tau).replace(".", "p")
        rows[tau] = hardest_share_and_entropy(u, vp, vn, hardest, tau, k)
        for name, v in zip(
            ("nt_xent_hardest_share", "nt_xent_weight_entropy", "nt_logistic_hardest_share", "nt_logistic_weight_entropy"),
            rows[tau],
        ):
            evidence.metric(f"{name}_tau{tag}", v)
    shares = [rows[t][0] for t in TAUS]  # hardest negative's NT-Xent share, tau ascending
    ents = [rows[t][1] for t in TAUS]
    evidence.metric("nt_xent_share_falls_as_tau_rises", all(a > b for a, b in zip(shares, shares[1:])))
    evidence.metric("nt_xent_entropy_rises_with_tau", all(a < b for a, b in zip(ents, ents[1:])))
    evidence.metric("nt_xent_hardest_share_ratio_tau0p05_over_tau1", rows[0.05][0] / rows[1.0][0])
    evidence.metric("nt_logistic_hardest_share_ratio_tau0p05_over_tau1", rows[0.05][2] / rows[1.0][2])
    m_w = table2_grad_margin(u, vp, vn, margin)[1]  # K indicators
    evidence.metric("margin_hardest_share", (m_w[hardest] / m_w.sum()).item())
    evidence.metric("uniform_share", 1.0 / k)

    # 3) control: add one extra, very hard negative (cos 0.95 to u); do the other negatives' weights move?
    extra = F.normalize(u + 0.3 * torch.randn(d, generator=g, dtype=dt).to(device) / math.sqrt(d), dim=0)  # d
    for name, shift in other_weights_shift(u, vp, vn, extra, k, margin).items():
        evidence.metric(f"{name}_other_weights_max_rel_change", shift)
    evidence.metric("extra_negative_cosine", (extra @ u).item())

    fig = hardest_share_figure(rows, k)
    evidence.figure(
        "hardest_share_vs_tau",
        fig,
        caption="Share of the negatives' gradient weight that goes to the "
        "hardest negative against the temperature, NT-Xent beside NT-Logistic; dotted: the uniform share 1/K.",
    )
    plt.close(fig)
    evidence.note(f"d={d}, K={k} negatives with cos(u, v-) uniform in [-0.3, 0.8]; margin m={margin}; float64.")
