"""One iteration of HELR logistic-regression training (CKKS), at F1's and Osiris's sizes.

HELR (Han, Song, Cheon, Park, "Logistic regression on homomorphic encrypted data at scale",
AAAI 2019) trains a binary classifier by mini-batch Nesterov accelerated gradient (NAG) on
encrypted data. With labels y_i in {-1, +1} and samples x_i (a leading 1 for the bias), it
encrypts z_i = y_i·x_i and maximizes the log-likelihood (1/m) Σ_i log σ(z_i·β); one
iteration on a mini-batch of m samples and f features is

    g      = Σ_i σ(−z_i·v) z_i                    (the gradient, times m)
    β_new  = v + (γ/m)·g
    v_new  = (1 − η)·β_new + η·β

with σ(−t) replaced by the degree-3 least-squares polynomial on [−8, 8] that HELR uses
(from Kim et al. 2018): 0.5 − 1.20096·(t/8) + 0.81562·(t/8)³.

Packing, as HELR lays it out: the m × f matrix Z is cut into nb = f/g column blocks of
m × g, each one ciphertext whose slot r·g + c holds z_{r, j·g+c} (m·g = the slots), and
the weights are held per block, chunk j of v replicated in every row. The iteration:

1. inner products: Σ_j Z_j ⊙ V_j, then `sum_slots(g)` (rotate-and-sum within a row: slot
   r·g holds z_r·v);
2. the sigmoid polynomial on every slot (slot r·g holds σ(−z_r·v));
3. the broadcast of slot r·g over row r (HELR: a mask, then a rotate-and-sum);
4. gradient: (σ ⊙ Z_j).sum_slots(m, stride=g) (rotate-and-sum down the columns: every
   row holds chunk j of g), written out as its doubling steps in lockstep over the blocks
   (`column_sums`) so that each rotation key serves all blocks at once;
5. the NAG update. The step γ/m rides on step 3's diagonals (no level of its own, and the
   sum over the m rows then adds errors already scaled down), η on one multiply per term.

Configurations (`build(name)`, `CONFIGS`):

* ``f1``: F1 §7's logistic-regression benchmark (Table 3, 1.15 ms): "a single batch ... with
  up to 256 features, and 256 samples per batch, starting at computational depth L = 16".
  N = 2^14 (F1's maximum), so 8 blocks of 256 × 32; 16 limbs of 32-bit words (15 levels
  above a 32-bit q_0); HELR's per-block weights (16 weight inputs, 16 outputs); no bootstrap.
* ``helr-1024``: Osiris Table III's HELR-1024 (§VI: "an encrypted binary classifier on a
  subset of MNIST images of size 14x14 ... one mini-batch of size 1024"; 1 TB/s: NH 2.67,
  SH 2.61, DH 2.46 ms). 196 features (+ bias) padded to 256, m = 1024, N = 2^16 with 2^15
  slots: 8 blocks of 1024 × 32. One bootstrap per iteration (below). Parameters: Osiris
  Table II set III as `benchmarks/bench_osiris.py` builds it (`OSIRIS_SET_III`: the
  ``lattigo-n16`` preset on 40-bit words, 14 special primes), compiled for ``osiris``;
  `helr_1024(variant, "f1-64k")` puts it on F1's 32-bit words for the f1-64k what-if.
* ``small``: the ``helr-1024`` program at N = 2^12 (the ``bootstrap-toy`` preset with 8 more
  levels), m = 128, f = 64, g = 16: what ``fhec check`` runs (module-level ``small``).
* ``small-f1``: the ``f1`` program at N = 2^12, m = 128, f = 64 (module-level ``small_f1``).

Deviations from HELR's formulation (and the papers' runs):

* **One bootstrap per iteration, on a packed state.** With bootstrapping (``helr-1024``,
  ``small``) v and β live in one ciphertext S of period P = 2·nb·g slots: row r (of g slots)
  holds chunk r mod 2nb of v (r mod 2nb < nb) or of β (the rest), repeated over the slots.
  The iteration first unpacks V_j = (S ⊙ rows≡j).replicate(2nb, stride=g) (one level;
  log2 2nb rotations per block, in lockstep as in step 4, written as the equal
  `sum_slots(2nb, stride=g)` of the periodic S so that it reuses step 4's rotation keys)
  and ends by packing the update into S (the masks fold into the update's constants: no
  level), so one bootstrap refreshes all 2·f weights. Osiris runs HELR-1024 with sparsely
  packed bootstrapping (§VI): S repeats with period 2·f = 512, so ``helr_1024(...,
  sparse=True)`` bootstraps those 512 slots (``BootstrapConfig(slots=512)``); by default
  the bootstrap is fully packed, all 2^15 slots at N = 2^16.

* **The broadcast of step 3 is one linear transform** (g diagonals, the mask folded into
  them: slot i ← x[i − (i mod g)]) instead of HELR's mask + rotate-and-sum. It saves the
  mask's level and keeps fhec's value bounds exact (a replicate's tracked bound is g times
  its input's, which would overflow the bootstrap's input range); it costs about 2·√g
  rotations instead of log2 g.
* **The sigmoid is evaluated before the broadcast** (on every slot's window sum, of which
  slot r·g is z_r·v), so its input bound is the inner product's (|z·v| <= 8, HELR's
  interval) rather than a broadcast's looser one. σ is slot-wise, so the result is the same.
* **The data is scaled.** fhec tracks value bounds and refuses values that could overflow,
  and the inner product must stay within the sigmoid's interval, so the data is scaled down
  (z = y·x·s, `HelrConfig.data_bound`: 8 / (features × 1/2 × the unpack's 2nb rows), 1/16
  for ``f1``, 1/256 for ``helr-1024``) while the weights stay of order one (|v|, |β| <=
  1/2), so that the bootstrap's absolute error is small beside them. Measured against
  numpy's HELR on MNIST-like data (tests/examples/test_helr.py), the largest error is 5e-4
  on outputs up to 0.73 at ``small-f1``, 1.1e-3 on outputs up to 0.77 at ``f1`` and 3.2e-4
  on the bootstrapped state (up to 0.73) at ``small``.
* **Depth.** 6 levels (``f1``: ciphertexts from 16 limbs down to 10; F1 names L = 14, 15, 16)
  and 7 plus one for the bootstrap's ModRaise with the packed state (8 usable levels: Osiris
  set III's L_eff = 8).
* **Constants.** γ and η are parameters (the learning rate and NAG's η_t = (1 − λ_t)/λ_{t+1},
  λ_0 = 0, λ_{t+1} = (1 + sqrt(1 + 4λ_t²))/2), for iteration t = 2 by default; they change no
  cost.

Run:  fhec check fhec/examples/helr.py     # the two small programs, about a minute
      python benchmarks/run.py helr          # build("f1") and build("helr-1024") compiled
"""

import math
from dataclasses import dataclass, replace

import numpy as np

import fhec
from fhec.examples.bootstrap import OSIRIS_HAMMING_WEIGHT, OSIRIS_Q0_BITS, OSIRIS_SET_III  # noqa: F401 (re-exported)

SIGMOID3_NEG = (0.5, -1.20096 / 8, 0.0, 0.81562 / 8**3)
"""σ(−t) ≈ 0.5 − 0.15012·t + 0.00159·t³ (HELR's degree-3 least squares on [−8, 8])."""

IP_RANGE = 8.0
"""|z·v| must stay within the sigmoid approximation's interval [−8, 8]."""


def nesterov_eta(t: int) -> float:
    """NAG's η_t = (1 − λ_t)/λ_{t+1}, with λ_0 = 0 and λ_{k+1} = (1 + sqrt(1 + 4λ_k²))/2."""
    lam = [0.0]
    for _ in range(t + 1):
        lam.append((1 + math.sqrt(1 + 4 * lam[-1] ** 2)) / 2)
    return (1 - lam[t]) / lam[t + 1]


@dataclass(frozen=True)
class HelrConfig:
    """One HELR iteration's shape and parameters.

    Attributes:
        name: the configuration's name (the program's too).
        params: zero-argument callable giving the `CKKSParams`.
        samples: m, the mini-batch size; features: f (padded); the slots must be m·g for a
            block width g dividing f.
        bootstrap: refresh the state with one bootstrap at the end (packed state).
        gamma: the learning rate γ; step: the iteration index t of η_t.
        weight_bound: the weights' declared bound |v|, |β| (the packed state's is below 1/2
            so that the bootstrap's sine stays invertible at the toy set's message ratio).
        hoisting: the hoisting of the program's own linear transforms (the broadcast and the
            packed update's), "none", "single" or "double"; None: the compile option.
    """

    name: str
    params: object
    samples: int
    features: int
    bootstrap: bool
    gamma: float = 1.0
    step: int = 2
    hoisting: str | None = None
    weight_bound: float = 0.5

    @property
    def width(self) -> int:
        """g, the features per block (a block's row)."""
        return self.params().slots // self.samples

    @property
    def blocks(self) -> int:
        return self.features // self.width

    @property
    def eta(self) -> float:
        return nesterov_eta(self.step)

    @property
    def data_bound(self) -> float:
        """The data's declared bound |z|: the inner product's tracked bound is then IP_RANGE
        (the packed state's unpack multiplies the weights' tracked bound by its 2nb rows)."""
        spread = 2 * self.blocks if self.bootstrap else 1
        return IP_RANGE / (self.features * spread * self.weight_bound)


def f1_params(special_primes: int = 1) -> fhec.CKKSParams:
    """F1 §7: N = 16K, L = 16 limbs of 32-bit words (15 levels of 2^30 above a 32-bit q_0).

    One special prime by default: key switching then has 16 digits of one limb each, a hint
    of 2 x 16 x 17 limbs (34 MB), F1's L^2-sized hints (§2.4: "taking up 32MB" at L = 16).
    16 limbs of 32 bits plus the special primes exceed the HE standard's 438 bits at
    N = 2^14, and F1 states no security for this benchmark: security=None."""
    return fhec.CKKSParams(N=2**14, levels=15, scale_bits=30, word_bits=32, special_primes=special_primes,
                           security=None)


F1_WORDS = dict(word_bits=32, scale_bits=28, base_limbs=2, q_bits=OSIRIS_Q0_BITS + (28,) * 24)
"""The lattigo-n16 preset on F1's 32-bit words (for the f1-64k what-if): set III's 48-bit
q_0 and 24 levels, 28-bit level primes."""


def osiris_params(hoisting: str | None = None, words: dict = OSIRIS_SET_III,
                  sparse_slots: int | None = None) -> fhec.CKKSParams:
    """Osiris set III (`OSIRIS_SET_III`; `F1_WORDS` for f1-64k), 8 levels after a bootstrap;
    `hoisting` for the bootstrap's DFT transforms (None: the compile option). With
    `sparse_slots`, the bootstrap is sparsely packed (``BootstrapConfig(slots=...)``; its
    scale-down takes one more level, so CoeffsToSlots takes 3 factors instead of 4)."""
    literal = fhec.CKKSParams.preset("lattigo-n16")
    sparse = {} if sparse_slots is None else {"slots": sparse_slots, "cts_depth": 3}
    config = fhec.BootstrapConfig(**{**literal.bootstrap.model_dump(), "hoisting": hoisting,
                                     "hamming_weight": OSIRIS_HAMMING_WEIGHT, **sparse})
    return fhec.CKKSParams.preset("lattigo-n16", bootstrap=config, **words)


def toy_params(sparse_slots: int | None = None) -> fhec.CKKSParams:
    """bootstrap-toy with 8 usable levels after its bootstrap (INSECURE: security=None);
    `sparse_slots` as in `osiris_params`."""
    literal = fhec.CKKSParams.preset("bootstrap-toy")
    sparse = {} if sparse_slots is None else {"slots": sparse_slots}
    config = fhec.BootstrapConfig(**{**literal.bootstrap.model_dump(), **sparse})
    return fhec.CKKSParams.preset("bootstrap-toy", levels=config.depth(literal.N) + 8, bootstrap=config)


def _toy_f1_params() -> fhec.CKKSParams:
    return fhec.CKKSParams(N=2**12, levels=6, scale_bits=28, word_bits=32, security=None)


CONFIGS: dict[str, HelrConfig] = {
    c.name: c
    for c in (
        HelrConfig("f1", f1_params, samples=256, features=256, bootstrap=False),
        HelrConfig("helr-1024", osiris_params, samples=1024, features=256, bootstrap=True),
        HelrConfig("small", toy_params, samples=128, features=64, bootstrap=True),
        HelrConfig("small-f1", _toy_f1_params, samples=128, features=64, bootstrap=False),
    )
}
"""The shipped configurations by name (module docstring)."""


def _row_mask(slots: int, width: int, period_rows: int, rows) -> np.ndarray:
    """1.0 on the slots of rows r with r mod period_rows in `rows`, 0 elsewhere."""
    r = (np.arange(slots) // width) % period_rows
    return np.isin(r, list(rows)).astype(float)


def broadcast_diagonals(slots: int, width: int, factor: float = 1.0) -> dict[int, np.ndarray]:
    """{step: diagonal} of slot i ← factor·x[i − (i mod width)]: each row gets its first slot."""
    col = np.arange(slots) % width
    return {(-c) % slots: factor * (col == c) for c in range(width)}


def _iteration(cfg: HelrConfig, z: list, v: list, gradient_terms) -> None:
    """Steps 1–4 of the module docstring; calls `gradient_terms(j, (γ/m)·g_j)` per block.
    The step γ/m rides on the broadcast's diagonals (no level of its own), before the sum
    over the m rows, so that the sum's error is scaled down with its values."""
    params = cfg.params()
    products = [zj * vj for zj, vj in zip(z, v)]
    total = products[0]
    for t in products[1:]:
        total = total + t
    ip = total.sum_slots(cfg.width)
    sigma = ip.polynomial(list(SIGMOID3_NEG))
    step = cfg.gamma / cfg.samples
    sigma = sigma.linear_transform(broadcast_diagonals(params.slots, cfg.width, step), hoisting=cfg.hoisting)
    for j, gj in enumerate(column_sums([sigma * zj for zj in z], cfg.samples, cfg.width)):
        gradient_terms(j, gj)


def column_sums(values: list, n: int, stride: int) -> list:
    """`[x.sum_slots(n, stride=stride) for x in values]` for a power-of-two n, written as
    its rotate-and-add doubling steps taken in lockstep over the values: every value's
    rotation by 2^k·stride comes before any rotation by 2^(k+1)·stride, so each rotation key
    is loaded once for all blocks (F1 §4.2's key-switch hint reuse). fhec's ordering pass
    keeps independent `sum_slots` chains apart; on `f1` this order cuts the F1 row's time
    from 2.61 to 0.80 ms (non-compulsory hint traffic from 634 to 33 MB)."""
    shift = stride
    while shift < n * stride:
        values = [x + x.rotate(shift) for x in values]
        shift *= 2
    return values


def build(name: str = "small", **changes) -> fhec.Program:
    """The HELR iteration of configuration `name` (`CONFIGS`); `changes` replace fields of
    its `HelrConfig` (e.g. ``gamma=0.5``, ``hoisting="double"``). Raises `fhec.ParameterError`
    for an unknown name."""
    if name not in CONFIGS:
        raise fhec.ParameterError(f"no HELR configuration {name!r}; choose one of {', '.join(CONFIGS)}.")
    cfg = replace(CONFIGS[name], **changes)
    params = cfg.params()
    slots, g, nb, m = params.slots, cfg.width, cfg.blocks, cfg.samples
    if m * g != slots or nb * g != cfg.features:
        raise fhec.ParameterError(f"HELR {name}: {m} samples x {cfg.features} features do not tile {slots} slots.")
    p = fhec.Program(f"helr-{name}" if not name.startswith("helr") else name, params)
    (_packed if cfg.bootstrap else _per_block)(p, cfg, cfg.eta)
    return p


def _per_block(p: fhec.Program, cfg: HelrConfig, eta: float) -> None:
    """HELR's own layout: per-block weights v_j, β_j in, v_new_j, β_new_j out."""
    nb, bound = cfg.blocks, cfg.weight_bound
    z = [p.input(f"z{j}", bound=cfg.data_bound) for j in range(nb)]
    v = [p.input(f"v{j}", bound=bound) for j in range(nb)]
    beta = [p.input(f"beta{j}", bound=bound) for j in range(nb)]

    def update(j, gj):
        p.output(f"beta_new{j}", v[j] + gj)
        p.output(f"v_new{j}", (v[j] + gj) * (1 - eta) + beta[j] * eta)

    _iteration(cfg, z, v, update)


def _packed(p: fhec.Program, cfg: HelrConfig, eta: float) -> None:
    """The packed state S (module docstring), refreshed by one bootstrap."""
    slots, g, nb = p.params.slots, cfg.width, cfg.blocks
    rows = 2 * nb  # rows of one period: nb chunks of v, then nb of β
    top_after = p.params.top_level - p.params.bootstrap.depth(p.params.N)
    s = p.input("state", level=top_after, bound=cfg.weight_bound)
    z = [p.input(f"z{j}", level=top_after - 1, bound=cfg.data_bound) for j in range(nb)]
    # S has period rows·g, so replicating a row over the period (rotations by −g, −2g, ...)
    # equals summing the period's rows (by +g, +2g, ...): the keys of the gradient's sums.
    v = column_sums([s * _row_mask(slots, g, rows, [j]) for j in range(nb)], rows, g)
    v_rows, beta_rows = range(nb), range(nb, rows)
    # v rows: (1 − η)v + η β (β sits nb rows further on); β rows: v (nb rows back).
    carried = s.linear_transform({
        0: (1 - eta) * _row_mask(slots, g, rows, v_rows),
        nb * g: eta * _row_mask(slots, g, rows, v_rows),
        (-nb * g) % slots: _row_mask(slots, g, rows, beta_rows),
    }, hoisting=cfg.hoisting)
    terms = []

    def pack(j, gj):
        terms.append(gj * ((1 - eta) * _row_mask(slots, g, rows, [j]) + _row_mask(slots, g, rows, [nb + j])))

    _iteration(cfg, z, v, pack)
    new = carried
    for t in terms:
        new = new + t
    p.output("state_new", new.bootstrap())


def unpack_state(state: np.ndarray, cfg: HelrConfig) -> tuple[np.ndarray, np.ndarray]:
    """(v, β), each of `cfg.features` values, from the packed state's first period."""
    g, nb = cfg.width, cfg.blocks
    rows = state[: 2 * nb * g].reshape(2 * nb, g)
    return rows[:nb].reshape(-1), rows[nb:].reshape(-1)


def pack_state(v: np.ndarray, beta: np.ndarray, slots: int) -> np.ndarray:
    """The packed state of weights v, β (inverse of `unpack_state`), repeated over `slots`."""
    period = np.concatenate([v, beta])
    return np.tile(period, slots // period.size)


def pack_blocks(z: np.ndarray, cfg: HelrConfig) -> list[np.ndarray]:
    """The m × f matrix as nb slot vectors (block j: slot r·g + c holds z[r, j·g + c])."""
    g = cfg.width
    return [z[:, j * g:(j + 1) * g].reshape(-1) for j in range(cfg.blocks)]


def reference_iteration(z: np.ndarray, v: np.ndarray, beta: np.ndarray, cfg: HelrConfig):
    """One HELR iteration in numpy (the formulas of the module docstring): (v_new, β_new)."""
    t = z @ v
    sigma = np.polynomial.polynomial.polyval(t, SIGMOID3_NEG)
    gradient = z.T @ sigma
    beta_new = v + cfg.gamma / cfg.samples * gradient
    return (1 - cfg.eta) * beta_new + cfg.eta * beta, beta_new


# Paper numbers (ms) the suite runner prints beside fhec's.
_OSIRIS = {("osiris", "NH"): 2.67, ("osiris", "SH"): 2.61, ("osiris", "DH"): 2.46,
           ("osiris-2tb", "NH"): 2.49, ("osiris-2tb", "SH"): 2.38, ("osiris-2tb", "DH"): 2.10}
HOISTING = {"NH": "none", "SH": "single", "DH": "double"}
"""Osiris's BSGS variants and fhec's hoisting modes."""


def helr_1024(variant: str = "SH", target: str = "osiris", sparse: bool = False) -> fhec.Program:
    """HELR-1024 with the hoisting of Osiris's `variant` ("NH", "SH", "DH") in its
    bootstrap's transforms and in its own (so the compile option changes nothing), on set
    III's words for the osiris targets, on F1's for ``target="f1-64k"`` (a cost study: at
    2^28 scales the bootstrap's estimated precision is below zero, and tracing warns).
    `sparse`: the bootstrap refreshes only the packed state's period of 2·f = 512 slots,
    as Osiris's sparsely packed bootstrapping (`fhec.ParameterError` where fhec's
    `BootstrapConfig` builds full packing only)."""
    mode = HOISTING[variant]
    words = F1_WORDS if target == "f1-64k" else OSIRIS_SET_III
    cfg = CONFIGS["helr-1024"]
    period = 2 * cfg.features if sparse else None
    return build("helr-1024", hoisting=mode, params=lambda: osiris_params(mode, words, period))


def suite_rows() -> list[dict]:
    """The rows of `fhec bench --suite f1|osiris` this example provides (see fhec/suites/):
    F1's logistic regression, and HELR-1024 NH/SH/DH at 1 and 2 TB/s, with a sparse bootstrap
    of the state's 512 slots (as Osiris)."""
    sparse = True
    packing = "a sparse bootstrap of its 512 slots per iteration, as Osiris"
    rows = [{
        "suite": "f1", "name": "Logistic regression", "variant": None, "target": "f1", "paper_ms": 1.15,
        "paper_source": "F1 Table 3", "build": lambda: build("f1"), "needs": None,
        "note": "HELR, 256 samples x 256 features in 8 blocks at N = 2^14 from L = 16; the broadcast is one "
                "linear transform and the iteration uses 6 levels (F1 names L = 14-16).",
    }]
    for target in ("osiris", "osiris-2tb"):
        for variant in HOISTING:
            rows.append({
                "suite": "osiris", "name": "HELR-1024" + ("" if target == "osiris" else " (2 TB/s)"),
                "variant": variant, "target": target,
                "paper_ms": _OSIRIS[(target, variant)], "paper_source": "Osiris Table III(" +
                ("a)" if target == "osiris" else "b)"),
                "build": (lambda v=variant, t=target: helr_1024(v, t, sparse)), "needs": None,
                "note": f"v and beta packed in one ciphertext, {packing}; set III as benchmarks/bench_osiris.py "
                        "builds it.",
            })
    return rows


small = build("small")
small_f1 = build("small-f1")
