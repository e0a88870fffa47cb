"""Batched, seeded image augmentations on tensors, after SimCLR (Chen et al. 2020, §3 and Appendix A).

Every transform takes images `x: N x C x H x W` with values in [0, 1] (C = 3 for the colour ones) and a
CPU `torch.Generator`; per-sample parameters are drawn on the CPU from that generator and moved to
`x.device`, so the same seed gives the same views on CPU and CUDA. Each sample gets its own parameters.
`Augment(["crop", "colour"], strength=1.0)` composes them in the given order (SimCLR Figure 4 names).
`ShiftNoise` is the lighter view of the batch-norm-leak toys: a shift of up to a pixel and pixel noise.
Both make the views of a training step with `.views(imgs, generator)`: R x N x ... images -> R x N x D.
"""

import math

import torch
import torch.nn.functional as F

from verify.data import flat

GREY_WEIGHTS = (0.299, 0.587, 0.114)  # ITU-R 601 luma, as torchvision's rgb_to_grayscale


def _uniform(n, low, high, generator):
    """n samples of U[low, high) on the CPU."""
    return low + (high - low) * torch.rand(n, generator=generator)


def _bernoulli(n, p, generator):
    return torch.rand(n, generator=generator) < p


def random_resized_crop(x, generator, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), flip=True):
    """Crop a random area fraction `scale` and aspect `ratio` of each image, resize back to H x W, and flip
    horizontally with p = 0.5 (SimCLR Appendix A: 'random crop with resize and random flip')."""
    n = x.shape[0]
    area = _uniform(n, scale[0], scale[1], generator)  # fraction of the image area
    log_r = _uniform(n, math.log(ratio[0]), math.log(ratio[1]), generator)
    w = torch.sqrt(area * torch.exp(log_r)).clamp(max=1.0)  # crop width as a fraction of W
    h = torch.sqrt(area / torch.exp(log_r)).clamp(max=1.0)
    cx = _uniform(n, -1.0, 1.0, generator) * (1 - w)  # crop centre in [-1, 1] grid coordinates
    cy = _uniform(n, -1.0, 1.0, generator) * (1 - h)
    sign = torch.where(_bernoulli(n, 0.5 if flip else 0.0, generator), -1.0, 1.0)
    theta = torch.zeros(n, 2, 3)  # theta: N x 2 x 3 affine map output grid -> input grid
    theta[:, 0, 0], theta[:, 0, 2] = w * sign, cx
    theta[:, 1, 1], theta[:, 1, 2] = h, cy
    grid = F.affine_grid(theta.to(x), list(x.shape), align_corners=False)  # grid: N x H x W x 2
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def grey(x):
    """Luma of RGB images: N x 3 x H x W -> N x 1 x H x W."""
    w = torch.tensor(GREY_WEIGHTS, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    return (x * w).sum(1, keepdim=True)


def _blend(x, y, factor):
    """factor * x + (1 - factor) * y, clamped to [0, 1] as torchvision's _blend; factor: N."""
    return (factor.view(-1, 1, 1, 1) * x + (1 - factor.view(-1, 1, 1, 1)) * y).clamp(0, 1)


def _hue_rotate(x, turns):
    """Rotate the chroma plane of YIQ by `turns` of a full circle (an approximation of an HSV hue shift)."""
    to_yiq = torch.tensor(
        [[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]], dtype=x.dtype, device=x.device
    )
    yiq = torch.einsum("ij,njhw->nihw", to_yiq, x)  # yiq: N x 3 x H x W
    a = 2 * math.pi * turns.to(x)  # a: N
    i = yiq[:, 1] * torch.cos(a).view(-1, 1, 1) - yiq[:, 2] * torch.sin(a).view(-1, 1, 1)
    q = yiq[:, 1] * torch.sin(a).view(-1, 1, 1) + yiq[:, 2] * torch.cos(a).view(-1, 1, 1)
    yiq = torch.stack([yiq[:, 0], i, q], 1)
    return torch.einsum("ij,njhw->nihw", torch.linalg.inv(to_yiq), yiq).clamp(0, 1)


def colour_distortion(x, generator, strength=1.0, p_jitter=0.8, p_grey=0.2):
    """SimCLR Appendix A colour distortion of strength s: with p = 0.8 ColorJitter(0.8s, 0.8s, 0.8s, 0.2s)
    (brightness, contrast, saturation, hue, in a random order), then RandomGrayscale(p = 0.2)."""
    n, s = x.shape[0], strength
    jitter = _bernoulli(n, p_jitter, generator).to(x.device).view(-1, 1, 1, 1)
    b = _uniform(n, max(0.0, 1 - 0.8 * s), 1 + 0.8 * s, generator).to(x)  # brightness factor: N
    c = _uniform(n, max(0.0, 1 - 0.8 * s), 1 + 0.8 * s, generator).to(x)  # contrast factor: N
    sat = _uniform(n, max(0.0, 1 - 0.8 * s), 1 + 0.8 * s, generator).to(x)  # saturation factor: N
    hue = _uniform(n, -0.2 * s, 0.2 * s, generator)  # hue shift in turns: N
    ops = {
        "brightness": lambda y: _blend(y, torch.zeros_like(y), b),
        "contrast": lambda y: _blend(y, grey(y).mean((1, 2, 3), keepdim=True).expand_as(y), c),
        "saturation": lambda y: _blend(y, grey(y).expand_as(y), sat),
        "hue": lambda y: _hue_rotate(y, hue),
    }
    order = torch.randperm(4, generator=generator).tolist()  # torchvision ColorJitter: random order
    y = x
    for k in order:
        y = list(ops.values())[k](y)
    y = torch.where(jitter, y, x)
    to_grey = _bernoulli(n, p_grey, generator).to(x.device).view(-1, 1, 1, 1)
    return torch.where(to_grey, grey(y).expand_as(y), y)


def cutout(x, generator, max_side=0.5, fill=0.0):
    """Replace a random square (side U[0, max_side] of the image side, centre anywhere) with `fill`."""
    n, _, h, w = x.shape
    side = _uniform(n, 0.0, max_side, generator) * min(h, w)  # side in pixels: N
    cy, cx = _uniform(n, 0, h, generator), _uniform(n, 0, w, generator)
    rows = torch.arange(h).view(1, h, 1) + 0.5
    cols = torch.arange(w).view(1, 1, w) + 0.5
    inside = ((rows - cy.view(-1, 1, 1)).abs() < side.view(-1, 1, 1) / 2) & (
        (cols - cx.view(-1, 1, 1)).abs() < side.view(-1, 1, 1) / 2
    )  # inside: N x H x W
    return torch.where(inside.unsqueeze(1).to(x.device), torch.full_like(x, fill), x)


def gaussian_blur(x, generator, sigma=(0.1, 2.0), p=0.5):
    """SimCLR Appendix A: with p = 0.5, blur with sigma ~ U[0.1, 2.0] and a kernel 10% of the image side
    (at least 3 px; at 8 x 8 the 3-tap kernel bounds how strong the blur can get)."""
    n, c, h, w = x.shape
    k = max(3, int(0.1 * h) // 2 * 2 + 1)
    sd = _uniform(n, sigma[0], sigma[1], generator)  # sd: N
    taps = torch.arange(k, dtype=torch.float32) - k // 2
    kern = torch.exp(-(taps.view(1, k) ** 2) / (2 * sd.view(n, 1) ** 2))
    kern = (kern / kern.sum(1, keepdim=True)).to(x)  # kern: N x k
    kern = kern.repeat_interleave(c, 0)  # kern: N*C x k, one kernel per image and channel
    y = F.pad(x.reshape(1, n * c, h, w), (k // 2,) * 4, mode="reflect")
    y = F.conv2d(y, kern.view(n * c, 1, k, 1), groups=n * c)
    y = F.conv2d(y, kern.view(n * c, 1, 1, k), groups=n * c).view(n, c, h, w)
    apply = _bernoulli(n, p, generator).to(x.device).view(-1, 1, 1, 1)
    return torch.where(apply, y, x)


def rotate_quarters(x, quarters):
    """Rotate each image by quarters * 90 degrees. x: ... x H x W, quarters: ... (ints 0..3)."""
    out = x.clone()
    for q in (1, 2, 3):
        idx = quarters == q
        out[idx] = torch.rot90(x[idx], q, dims=(-2, -1))  # the selected images: n_q x ... x H x W
    return out


def rotation(x, generator):
    """Rotate each image by 90, 180 or 270 degrees (SimCLR Figure 4: 'rotate {90°, 180°, 270°}')."""
    quarter = torch.randint(1, 4, (x.shape[0],), generator=generator).to(x.device)  # quarter: N
    return rotate_quarters(x, quarter)


def gaussian_noise(x, generator, std=(0.0, 0.2)):
    """Add N(0, sd^2) noise with sd ~ U[std] per image, clamped to [0, 1]."""
    sd = _uniform(x.shape[0], std[0], std[1], generator).view(-1, 1, 1, 1)
    noise = torch.randn(x.shape, generator=generator) * sd
    return (x + noise.to(x)).clamp(0, 1)


TRANSFORMS = {
    "crop": random_resized_crop,
    "colour": colour_distortion,
    "cutout": cutout,
    "blur": gaussian_blur,
    "rotate": rotation,
    "noise": gaussian_noise,
}


class Augment:
    """A composition of named transforms applied in order, e.g. Augment(["crop", "colour"], strength=0.5).

    `strength` is the colour distortion strength s; `crop_scale` the area range of the crop."""

    def __init__(self, names, strength=1.0, crop_scale=(0.08, 1.0)):
        unknown = [n for n in names if n not in TRANSFORMS]
        if unknown:
            raise ValueError(f"unknown transforms {unknown}; known: {sorted(TRANSFORMS)}")
        self.names, self.strength, self.crop_scale = list(names), strength, crop_scale

    def __call__(self, x, generator):
        for name in self.names:
            if name == "colour":
                x = colour_distortion(x, generator, strength=self.strength)
            elif name == "crop":
                x = random_resized_crop(x, generator, scale=self.crop_scale)
            else:
                x = TRANSFORMS[name](x, generator)
        return x

    def views(self, imgs, generator):
        """One view of every image of R replicas' batches: R x N x C x H x W -> R x N x C*H*W."""
        r, n = imgs.shape[:2]
        v = self(imgs.reshape(r * n, *imgs.shape[2:]), generator)  # v: RN x C x H x W
        return v.reshape(r, n, -1)

    def __repr__(self):
        return f"Augment({self.names}, strength={self.strength}, crop_scale={self.crop_scale})"


def shift_noise(x, generator, max_shift=1, noise=0.1):
    """Random translation by up to `max_shift` pixels (zero-pad + crop) and additive Gaussian noise, one draw per
    image. x: ... x H x W -> same shape."""
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    imgs = x.reshape(-1, h, w)  # imgs: M x H x W
    m = imgs.shape[0]
    padded = F.pad(imgs, (max_shift, max_shift, max_shift, max_shift))  # padded: M x (H+2s) x (W+2s)
    off = torch.randint(0, 2 * max_shift + 1, (m, 2), generator=generator, device="cpu").to(x.device)  # off: M x 2
    rows = off[:, 0:1] + torch.arange(h, device=x.device)  # rows: M x H
    cols = off[:, 1:2] + torch.arange(w, device=x.device)  # cols: M x W
    idx = torch.arange(m, device=x.device)[:, None, None]
    crop = padded[idx, rows[:, :, None], cols[:, None, :]]  # crop: M x H x W
    eps = torch.randn(crop.shape, generator=generator, device="cpu").to(x.device)
    return (crop + noise * eps).reshape(*lead, h, w)


class ShiftNoise:
    """The views of the batch-norm-leak toys on digits: `shift_noise`, then (rotate=True) an independent quarter turn
    per view (SimCLR Table 3 caption: rotation added to the pretraining augmentation)."""

    def __init__(self, max_shift=1, noise=0.1, rotate=False):
        self.max_shift, self.noise, self.rotate = max_shift, noise, rotate

    def views(self, imgs, generator):
        """R x N x 8 x 8 -> R x N x 64."""
        v = shift_noise(imgs, generator, self.max_shift, self.noise)  # v: R x N x 8 x 8
        if self.rotate:
            quarters = torch.randint(0, 4, v.shape[:2], generator=generator).to(v.device)  # quarters: R x N
            v = rotate_quarters(v, quarters)
        return flat(v)

    def __repr__(self):
        return f"ShiftNoise(max_shift={self.max_shift}, noise={self.noise}, rotate={self.rotate})"
