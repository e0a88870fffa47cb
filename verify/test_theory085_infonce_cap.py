"""THEORY-085: the InfoNCE estimate I_NCE = log N - L_NCE (the bound I >= log N - L_N of van den Oord et al. 2018,
CPC §2.3) can never exceed log N, because L_NCE is a cross-entropy and never negative; checked over random and
adversarial critics, with the NWJ bound as the control. With the optimal critic the estimate tracks the true mutual
information only while it is well below log N, and saturates just below log N once it is above."""

import math

import matplotlib.pyplot as plt
import pytest
import torch

SEED = 0


def infonce_estimate(scores):
    """I_NCE = log N - L_NCE for one batch; scores[i, j] = f(x_i, y_j), positives on the diagonal (CPC eq. 4)."""
    n = scores.shape[-1]
    # per-row cross entropy of picking the positive among N candidates: ... x N
    l_nce = -(torch.diagonal(scores, dim1=-2, dim2=-1) - torch.logsumexp(scores, dim=-1))
    return math.log(n) - l_nce.mean(dim=-1)  # one estimate per batch: ...


def nwj_estimate(scores):
    """NWJ / f-GAN KL bound (Nguyen et al. 2010; Poole et al. 2019 eq. 11) on the same N x N scores: E_p[f] - e^-1 E_q[e^f]."""
    n = scores.shape[-1]
    off = ~torch.eye(n, dtype=torch.bool, device=scores.device)  # N x N mask of product-of-marginals pairs
    joint = torch.diagonal(scores, dim1=-2, dim2=-1).mean(dim=-1)
    marg = torch.exp(scores[..., off] - 1.0).mean(dim=-1)  # e^{f-1} averaged over the N(N-1) negative pairs
    return joint - marg


def _measure_cap(seed, device):
    """Largest I_NCE - log N over random, hand-made adversarial and gradient-ascent score matrices; NWJ as the control."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    excess_nce, excess_nwj, adv_gap = -math.inf, -math.inf, math.inf
    n_trials = 0
    for n in (2, 8, 64, 256):
        log_n = math.log(n)
        # random critics: 32 batches of N x N Gaussian scores at scales from flat to near-one-hot
        for scale in (0.01, 1.0, 10.0, 100.0, 1.0e3):
            s = (scale * torch.randn(32, n, n, generator=g, dtype=torch.float64)).to(device)  # 32 x N x N
            excess_nce = max(excess_nce, (infonce_estimate(s) - log_n).max().item())
            excess_nwj = max(excess_nwj, (nwj_estimate(s) - log_n).max().item())
            n_trials += 32
        # hand-made adversary: positive scored +c, every negative -c (the perfectly separating critic)
        for c in (1.0, 10.0, 100.0, 1.0e3):
            s = torch.full((n, n), -c, dtype=torch.float64, device=device)  # N x N
            s.fill_diagonal_(c)
            est = infonce_estimate(s).item()
            excess_nce = max(excess_nce, est - log_n)
            excess_nwj = max(excess_nwj, nwj_estimate(s).item() - log_n)
            adv_gap = min(adv_gap, log_n - est)
            n_trials += 1
        # learned adversary: gradient ascent on the raw N x N scores maximising each estimator
        for name in ("nce", "nwj"):
            s = torch.randn(n, n, generator=g, dtype=torch.float64).to(device).requires_grad_(True)  # N x N
            opt = torch.optim.Adam([s], lr=0.5)
            for _ in range(150):
                est = infonce_estimate(s) if name == "nce" else nwj_estimate(s)
                opt.zero_grad()
                (-est).backward()
                opt.step()
            with torch.no_grad():
                if name == "nce":
                    excess_nce = max(excess_nce, infonce_estimate(s).item() - log_n)
                else:
                    excess_nwj = max(excess_nwj, nwj_estimate(s).item() - log_n)
            n_trials += 1
    return {
        "max_infonce_minus_log_n": excess_nce,
        "min_adversarial_gap_to_log_n": adv_gap,
        "max_nwj_minus_log_n": excess_nwj,
        "n_score_matrices": n_trials,
    }


@pytest.mark.claim("THEORY-085", "log-n-cap")
def test_infonce_estimate_never_exceeds_log_n(evidence, device):
    """Over random and adversarial critics I_NCE <= log N (reached only by a perfectly separating critic); NWJ has no such cap."""
    m = _measure_cap(SEED, device)
    for k, v in m.items():
        evidence.metric(k, v)
    evidence.note("N in {2, 8, 64, 256}; Gaussian critics at 5 scales x 32 batches, +-c critics, 150 Adam steps of ascent.")


# ----------------------------------------------------------------------------------------------------------------------


def gaussian_log_ratio(x, y, rho):
    """Optimal critic f*(x_i, y_j) = log p(y_j | x_i) / p(y_j) for d independent unit-variance pairs with correlation rho."""
    d = x.shape[-1]
    one_m = 1.0 - rho**2
    xx = (x * x).sum(-1)  # B x N
    yy = (y * y).sum(-1)  # B x N
    # log r = -||y_j - rho x_i||^2 / (2(1-rho^2)) + ||y_j||^2 / 2 - d/2 log(1-rho^2), expanded to avoid B x N x N x d
    s = torch.matmul(x, y.transpose(-1, -2)).mul_(rho / one_m)  # B x N x N, rho x_i.y_j / (1-rho^2)
    s.add_((yy / 2 - yy / (2 * one_m))[:, None, :])  # + column term, depends on y_j only
    s.add_((-(rho**2) * xx / (2 * one_m) - d / 2 * math.log(one_m))[:, :, None])  # + row term, depends on x_i only
    return s  # B x N x N


def infonce_on_gaussians(true_mi, n, d, n_rows, g, device):
    """Monte Carlo I_NCE with the optimal critic for correlated Gaussians of known MI (I = -d/2 log(1 - rho^2))."""
    rho = math.sqrt(1.0 - math.exp(-2.0 * true_mi / d))
    n_batches = max(1, n_rows // n)
    chunk = max(1, 2**20 // (n * n))  # batches per chunk: keeps each B x N x N score tensor at <= 1M entries
    ests, log_ratio = [], []
    for start in range(0, n_batches, chunk):
        b = min(chunk, n_batches - start)
        x = torch.randn(b, n, d, generator=g, dtype=torch.float64).to(device)  # B x N x d
        e = torch.randn(b, n, d, generator=g, dtype=torch.float64).to(device)  # B x N x d
        y = rho * x + math.sqrt(1 - rho**2) * e  # B x N x d, corr(x_k, y_k) = rho per dim
        s = gaussian_log_ratio(x, y, rho)  # B x N x N
        ests.append(infonce_estimate(s))  # B
        log_ratio.append(torch.diagonal(s, dim1=-2, dim2=-1).reshape(-1))  # E_p[log r] = I exactly
    ests = torch.cat(ests)
    se = (ests.std() / math.sqrt(len(ests))).item() if len(ests) > 1 else float("nan")
    return ests.mean().item(), se, torch.cat(log_ratio).mean().item()


TRUE_MI = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # nats
D = 10  # independent Gaussian dims carrying the MI


def _measure_saturation(seed, device, n_values=(16, 4096), n_rows=16384):
    """I_NCE(optimal critic) vs true MI for each N; returns {(n, mi): (estimate, se)} and the E_p[log r] sanity check."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    table, worst_log_ratio = {}, 0.0
    for n in n_values:
        for mi in TRUE_MI:
            est, se, mean_log_ratio = infonce_on_gaussians(mi, n, D, n_rows, g, device)
            table[(n, mi)] = (est, se)
            worst_log_ratio = max(worst_log_ratio, abs(mean_log_ratio - mi) / mi)
    return table, worst_log_ratio


@pytest.mark.claim("THEORY-085", "saturates")
def test_infonce_saturates_at_log_n_with_optimal_critic(evidence, device):
    """With the true log density ratio as critic, I_NCE tracks I while I << log N and saturates near log N once
    I >> log N; with N=4096 (log N >> I) it tracks I."""
    table, worst_log_ratio = _measure_saturation(SEED, device)
    n_small, n_big = 16, 4096
    evidence.metric("critic_mean_log_ratio_rel_err", worst_log_ratio)  # sanity: E_p[f*] = I, so the critic is the right one
    for (n, mi), (est, se) in table.items():
        tag = f"n{n}_i{str(mi).replace('.', 'p')}"
        evidence.metric(f"bias_{tag}", est - mi)  # estimate - true MI (nats)
        evidence.metric(f"se_{tag}", se)
    log_small = math.log(n_small)
    # effect: above log N the estimate sits just below log N, far below the truth
    evidence.metric("n16_max_estimate_minus_log_n", max(table[(n_small, mi)][0] for mi in TRUE_MI) - log_small)
    evidence.metric("n16_i8_gap_to_log_n", log_small - table[(n_small, 8.0)][0])
    evidence.metric("n16_i16_gap_to_log_n", log_small - table[(n_small, 16.0)][0])
    evidence.metric("n16_i8_shortfall", 8.0 - table[(n_small, 8.0)][0])
    # below log N it tracks the truth
    evidence.metric("n16_i0p25_abs_err", abs(table[(n_small, 0.25)][0] - 0.25))
    evidence.metric("n16_i0p5_abs_err", abs(table[(n_small, 0.5)][0] - 0.5))
    evidence.metric("n16_i1_abs_err", abs(table[(n_small, 1.0)][0] - 1.0))
    # control: same estimator, same MI, log N = 8.3 >> I: the shortfall disappears, so the cap caused it
    evidence.metric("n4096_i2_abs_err", abs(table[(n_big, 2.0)][0] - 2.0))
    evidence.metric("n4096_i4_abs_err", abs(table[(n_big, 4.0)][0] - 4.0))
    evidence.metric("n16_i4_shortfall", 4.0 - table[(n_small, 4.0)][0])

    fig, ax = plt.subplots(figsize=(5, 4))
    for n in (n_small, n_big):
        ax.errorbar(
            TRUE_MI,
            [table[(n, mi)][0] for mi in TRUE_MI],
            yerr=[table[(n, mi)][1] for mi in TRUE_MI],
            marker="o",
            label=f"I_NCE, N={n}",
        )
        ax.axhline(math.log(n), ls="--", lw=0.8, color="grey")
    ax.plot(TRUE_MI, TRUE_MI, "k:", label="true I")
    ax.set_xscale("log")
    ax.set_xlabel("true MI (nats)")
    ax.set_ylabel("estimate (nats)")
    ax.legend()
    evidence.figure(
        "infonce_vs_true_mi",
        fig,
        caption="The InfoNCE estimate against the true mutual information of "
        "correlated Gaussians for each batch size N; dashed lines: log N, the cap; dotted: the true value.",
    )
    plt.close(fig)
    evidence.note(f"d={D} correlated Gaussian dims, optimal critic in closed form, 16384 rows per point (float64).")
