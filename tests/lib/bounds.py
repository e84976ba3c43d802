#!/usr/bin/env python3
"""bounds.py - the arithmetic behind the false-failure chances that the
tests state next to their statistical assertions (tests/README.md,
"False-failure bounds").  A test that judges sampled data fails by bad
luck with some chance even when prof is right; this computes that chance
from the sample counts a run gets and the test's margin, so that the
comment beside the assertion is a number anyone can re-derive.

Model: each of the N samples of a run falls in the function (or stack,
thread, ...) independently with the true share p: a binomial count.  The
kernel's cpu-clock samples come from a periodic timer, so a workload that
cycles through its functions many times a second gets its samples more
evenly than independent draws (docs/regressions.md: a CV of 1.2% where
Poisson says 6.7%): the binomial tail is an upper bound there, not an
estimate.  Tails are exact sums (log-gamma), not normal approximations.

  bounds.py share N TRUTH_PCT TOL_PCT     P(|share - truth| > tol)
  bounds.py below N TRUTH_PCT MIN_PCT     P(share < min)
  bounds.py above N TRUTH_PCT MAX_PCT     P(share > max)
  bounds.py poisson-below MEAN K          P(Poisson(MEAN) < K)
  bounds.py normal Z                      P(|Z| >= z), standard normal
  bounds.py ratio CV RUNS MARGIN_PCT      P(|mean(head)/mean(base) - 1| >= margin),
                                          RUNS runs a side, per-run CV (normal model)
  bounds.py mw N1 N2 U                    P(U <= u), Mann-Whitney U of N1+N2 exchangeable runs
  bounds.py moved CHANGE_PCT CV RUNS MIN_EFFECT_PCT FAMILY
                                          Monte Carlo (fixed seed, 10^6 draws) of prof's
                                          "time moved" rule (src/analysis/compare.c,
                                          crosscheck.c) for one function whose true change
                                          is CHANGE_PCT: P(moved) when it is 0 (a false
                                          alarm; q >= p, so p < alpha is taken as enough),
                                          else P(not moved) (a missed change; q <= p x
                                          FAMILY, so p x FAMILY < alpha is asked)
  bounds.py sum P...                      the sum (the suite's union bound)
  bounds.py --selftest                    checks against values known in closed form

Each prints the chance as "P (1 in X)".
"""
import math
import sys

EPS = 1e-9	# n * 0.4 is 40.000000000000004 in binary floating point


def _log_pmf(n, p, k):
    if p <= 0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def _sum_pmf(n, p, lo, hi):
    """P(lo <= X <= hi) for X ~ Binomial(n, p), summed in log space."""
    lo, hi = max(lo, 0), min(hi, n)
    if lo > hi:
        return 0.0
    logs = [_log_pmf(n, p, k) for k in range(lo, hi + 1)]
    top = max(logs)
    if top == -math.inf:
        return 0.0
    return math.exp(top) * sum(math.exp(x - top) for x in logs)


def binom_cdf(n, p, k):
    """P(X <= k)."""
    return _sum_pmf(n, p, 0, k)


def binom_sf(n, p, k):
    """P(X >= k)."""
    return _sum_pmf(n, p, k, n)


def share_outside(n, truth, tol):
    """P(|X/n - truth| > tol): the assertion `share within tol of truth`."""
    lo = math.ceil(n * (truth - tol) - EPS) - 1	# X <= lo fails
    hi = math.floor(n * (truth + tol) + EPS) + 1	# X >= hi fails
    return binom_cdf(n, truth, lo) + binom_sf(n, truth, hi)


def share_below(n, truth, minimum):
    """P(X/n < minimum): the assertion `share >= minimum`."""
    return binom_cdf(n, truth, math.ceil(n * minimum - EPS) - 1)


def share_above(n, truth, maximum):
    """P(X/n > maximum): the assertion `share <= maximum`."""
    return binom_sf(n, truth, math.floor(n * maximum + EPS) + 1)


def poisson_below(mean, k):
    """P(Poisson(mean) < k)."""
    if k <= 0:
        return 0.0
    logs = [-mean + i * math.log(mean) - math.lgamma(i + 1) for i in range(k)]
    top = max(logs)
    return math.exp(top) * sum(math.exp(x - top) for x in logs)


def normal_two_sided(z):
    """P(|Z| >= z)."""
    return math.erfc(z / math.sqrt(2))


def ratio_outside(cv, runs, margin):
    """P(|mean(B)/mean(A) - 1| >= margin), A and B RUNS runs each of a
    per-run count with coefficient of variation CV (normal model of the
    log of the means; delta method)."""
    sd = cv * math.sqrt(2.0 / runs)
    up, down = math.log1p(margin), -math.log1p(-margin) if margin < 1 else math.inf
    return 0.5 * normal_two_sided(up / sd) + 0.5 * normal_two_sided(down / sd)


def mw_cdf(n1, n2, u):
    """P(U <= u) for the Mann-Whitney U of n1 and n2 exchangeable values
    (no ties): the count of arrangements, by the usual recursion."""
    # f[a][b][k]: arrangements of a and b values with U = k
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def f(a, b, k):
        if k < 0:
            return 0
        if a == 0 or b == 0:
            return 1 if k == 0 else 0
        return f(a - 1, b, k - b) + f(a, b - 1, k)
    total = math.comb(n1 + n2, n1)
    return sum(f(n1, n2, k) for k in range(u + 1)) / total


def t_quantile(p, df):
    """Student t quantile as prof computes it (an_t_quantile, compare.c)."""
    from statistics import NormalDist
    z = NormalDist().inv_cdf(p)
    if df > 1e6:
        return z
    if df < 1.5:
        return math.tan(math.pi * (p - 0.5))
    if df < 2.5:
        a = 4 * p * (1 - p)
        return (-1 if p < 0.5 else 1) * math.sqrt(2 / a - 2)
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def moved_chance(change, cv, runs, min_effect, family=1, alpha=0.05, draws=10 ** 6, seed=1):
    """See the usage above: per-run costs are normal with the given CV
    around 1 (base) and 1 + change (head), RUNS a side."""
    import random
    rng = random.Random(seed)
    n = runs
    cdf = [mw_cdf(n, n, u) for u in range(n * n + 1)]
    t = t_quantile(1 - alpha / 2, 2 * n - 2)	# df at equal variances; Welch's is lower
    scale = family if change else 1
    bad = 0
    for _ in range(draws):
        a = [1 + cv * rng.gauss(0, 1) for _ in range(n)]
        b = [(1 + change) * (1 + cv * rng.gauss(0, 1)) for _ in range(n)]
        ma, mb = sum(a) / n, sum(b) / n
        if ma <= 0 or mb <= 0:
            bad += change != 0
            continue
        va = sum((x - ma) ** 2 for x in a) / (n - 1)
        vb = sum((x - mb) ** 2 for x in b) / (n - 1)
        ua, ub = va / (n * ma * ma), vb / (n * mb * mb)
        df = (ua + ub) ** 2 / (ua * ua / (n - 1) + ub * ub / (n - 1)) if ua + ub > 0 else 1e9
        tq = t if abs(df - (2 * n - 2)) < 1e-9 else t_quantile(1 - alpha / 2, df)
        lr, se = math.log(mb / ma), math.sqrt(ua + ub)
        u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
        umin = min(u, n * n - u)
        p = min(1.0, 2 * cdf[int(umin)])
        moved = (p * scale < alpha and (lr - tq * se > 0 or lr + tq * se < 0)
                 and abs(mb / ma - 1) >= min_effect)
        bad += moved if change == 0 else not moved
    return bad / draws


def fmt(p):
    return "%.2g (1 in %s)" % (p, "%.3g" % (1 / p) if p > 0 else "inf")


def selftest():
    checks = [
        ("binom_sf(10, .5, 8) = 56/1024", binom_sf(10, 0.5, 8), 56 / 1024),
        ("binom_cdf(20, .3, 3)", binom_cdf(20, 0.3, 3), 0.10708680450),
        ("binom_cdf(n, p, n) = 1", binom_cdf(50, 0.37, 50), 1.0),
        ("share_outside(100, .5, .1) = 2 P(X <= 39)", share_outside(100, 0.5, 0.1),
         2 * binom_cdf(100, 0.5, 39)),
        ("share_below(10, .5, .3) = P(X <= 2)", share_below(10, 0.5, 0.3), 56 / 1024),
        ("share_above(10, .5, .7) = P(X >= 8)", share_above(10, 0.5, 0.7), 56 / 1024),
        ("poisson_below(3, 1) = e^-3", poisson_below(3, 1), math.exp(-3)),
        ("normal_two_sided(1.959964) = .05", normal_two_sided(1.959964), 0.05),
        ("mw_cdf(5, 5, 0) = 1/252", mw_cdf(5, 5, 0), 1 / 252),
        ("mw_cdf(5, 5, 2) = 4/252", mw_cdf(5, 5, 2), 4 / 252),
        ("mw_cdf(3, 4, 12) = 1", mw_cdf(3, 4, 12), 1.0),
        ("ratio_outside(.1, 2, tiny) ~ 1", ratio_outside(0.1, 2, 1e-9), 1.0),
        # large n: the exact tail against the normal one (continuity-corrected)
        ("binom_cdf(100000, .5, 49500) ~ normal", binom_cdf(100000, 0.5, 49500),
         0.5 * normal_two_sided((50000 - 49500.5) / math.sqrt(25000))),
    ]
    # the simulated rule: a 0.5% CV cannot make a 50% change look like less
    # than 10%, and it never moves a function that did not change by 10%
    checks.append(("moved(+50%, cv .005) misses", moved_chance(0.5, 0.005, 5, 0.1, 3, draws=2000), 0.0))
    checks.append(("moved(0, cv .005) alarms", moved_chance(0, 0.005, 5, 0.1, draws=2000), 0.0))
    # at CV 20% and no minimum effect, p < 0.05 needs U <= 2 of 25: the
    # exact 8/252 of exchangeable runs, give or take the CI condition
    sim = moved_chance(0, 0.2, 5, 0.0, draws=5000)
    checks.append(("moved(0, cv .2, no min effect) ~ 8/252", sim, 8 / 252))
    bad = 0
    for what, got, want in checks:
        ok = abs(got - want) <= 1e-6 * max(1.0, abs(want)) or abs(got - want) <= 0.02 * want
        if what.startswith("moved(0, cv .2"):
            ok = 0.5 * want <= got <= 1.3 * want	# the CI condition only removes alarms; 5000 draws
        print("%s %s: %.10g (want %.10g)" % ("ok  " if ok else "FAIL", what, got, want))
        bad += not ok
    # a bound is monotone in the margin and falls with the samples
    if not share_outside(1000, 0.6, 0.07) < share_outside(1000, 0.6, 0.05) < share_outside(200, 0.6, 0.05):
        print("FAIL monotone in margin and samples")
        bad += 1
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["--selftest"]:
        return selftest()
    cmds = {
        "share": (3, lambda a: share_outside(int(a[0]), a[1] / 100, a[2] / 100)),
        "below": (3, lambda a: share_below(int(a[0]), a[1] / 100, a[2] / 100)),
        "above": (3, lambda a: share_above(int(a[0]), a[1] / 100, a[2] / 100)),
        "poisson-below": (2, lambda a: poisson_below(a[0], int(a[1]))),
        "normal": (1, lambda a: normal_two_sided(a[0])),
        "ratio": (3, lambda a: ratio_outside(a[0], int(a[1]), a[2] / 100)),
        "mw": (3, lambda a: mw_cdf(int(a[0]), int(a[1]), int(a[2]))),
        "moved": (5, lambda a: moved_chance(a[0] / 100, a[1], int(a[2]), a[3] / 100, a[4])),
    }
    if argv and argv[0] == "sum" and len(argv) > 1:
        print(fmt(sum(float(x) for x in argv[1:])))
        return 0
    if not argv or argv[0] not in cmds or len(argv) != cmds[argv[0]][0] + 1:
        sys.stderr.write(__doc__)
        return 2
    print(fmt(cmds[argv[0]][1]([float(x) for x in argv[1:]])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
