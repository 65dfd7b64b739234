# SPDX-License-Identifier: GPL-2.0
"""benchstats: medians over rounds, their intervals, and target verdicts.

The benchmark runs every comparison as interleaved rounds (each arm once
per round).  A ratio pairs runs of the same round; the report gives the
median of the per-round ratios with an interval for the median.

Interval: distribution-free, from order statistics.  For n values sorted
x(1) <= ... <= x(n), [x(k), x(n+1-k)] contains the population median with
probability 1 - 2 P(B < k), B ~ Binomial(n, 1/2), whatever the
distribution of the values (Thompson 1936; the sign test's interval).  We
take the largest k whose coverage is at least LEVEL (95 %).  For n <= 5 no
k reaches 95 %: the interval is [min, max] and its coverage is what it is
-- 75 % for 3 rounds, 87.5 % for 4, 93.8 % for 5 -- and the report says so
beside every interval.  From 6 rounds on it is at least 95 % (96.9 % for
6).  A percentile bootstrap over rounds gives the same [min, max] for
n <= 5 (the bootstrap median of 3 values equals the smallest one with
probability 7/27 > 2.5 %) but states a coverage it does not have; the
order-statistic interval is exact, needs no seed, and is deterministic.

Verdicts:
  difference(iv, at=1.0)   "higher" / "lower" when the interval lies
                           entirely above / below `at`, else
                           "no difference"
  judge(iv, op, bound, rule)
                           "met" when the interval lies entirely on the
                           right side of the bound, "missed" when
                           entirely on the wrong side, else "unresolved";
                           rule "reaches": met when any part of the
                           interval is on the right side (the target "the
                           interval includes or exceeds the bound"),
                           missed otherwise.
"""

import math

LEVEL = 0.95


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def binom_cdf_half(k, n):
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2.0 ** n


def coverage(n, k):
    """Coverage of [x(k), x(n+1-k)] for the median of n values."""
    return 1.0 - 2.0 * binom_cdf_half(k - 1, n)


def order_k(n, level=LEVEL):
    """The k of the interval [x(k), x(n+1-k)]: the largest k >= 1 with
    coverage >= level, or 1 when none reaches it."""
    best = 1
    for k in range(1, (n + 1) // 2 + 1):
        if coverage(n, k) >= level:
            best = k
    return best


def interval(xs, level=LEVEL):
    """dict(n, median, lo, hi, coverage) of the values xs (None dropped);
    with no values, everything None and n 0.  With one value, lo = hi =
    median and coverage None (no interval)."""
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if n == 0:
        return dict(n=0, median=None, lo=None, hi=None, coverage=None)
    if n == 1:
        return dict(n=1, median=xs[0], lo=xs[0], hi=xs[0], coverage=None)
    k = order_k(n, level)
    return dict(n=n, median=median(xs), lo=xs[k - 1], hi=xs[n - k],
                coverage=coverage(n, k))


def paired_ratios(num, den):
    """Per-round ratios num[r] / den[r] over the rounds both have (dicts
    round -> value); rounds with a missing or zero denominator dropped."""
    out = {}
    for r in sorted(num):
        a, b = num.get(r), den.get(r)
        if a is not None and b:
            out[r] = a / b
    return out


def ratio_interval(num, den, level=LEVEL):
    """interval() of the paired per-round ratios, with their rounds."""
    rs = paired_ratios(num, den)
    iv = interval(list(rs.values()), level)
    iv["rounds"] = rs
    return iv


def difference(iv, at=1.0):
    """'higher', 'lower' or 'no difference' of an interval against at."""
    if iv is None or iv.get("n", 0) < 2 or iv.get("lo") is None:
        return None
    if iv["lo"] > at:
        return "higher"
    if iv["hi"] < at:
        return "lower"
    return "no difference"


OPS = (">=", ">", "<=", "<")


def _right(x, op, bound):
    return {">=": x >= bound, ">": x > bound,
            "<=": x <= bound, "<": x < bound}[op]


def judge(iv, op, bound, rule="interval"):
    """'met', 'missed', 'unresolved', or None without values."""
    if op not in OPS:
        raise ValueError("unknown op %r" % (op,))
    if iv is None or not iv.get("n") or iv.get("lo") is None:
        return None
    lo, hi = iv["lo"], iv["hi"]
    # the end of the interval nearest to the wrong side, and the other
    near, far = (lo, hi) if op in (">=", ">") else (hi, lo)
    if rule == "reaches":
        return "met" if _right(far, op, bound) else "missed"
    if rule != "interval":
        raise ValueError("unknown rule %r" % (rule,))
    if _right(near, op, bound):
        return "met"
    if not _right(far, op, bound):
        return "missed"
    return "unresolved"


def fmt_interval(iv, spec="%.2f"):
    """'1.07 [0.98, 1.12]' (or '1.07' for one value, 'n/a' for none)."""
    if iv is None or iv.get("median") is None:
        return "n/a"
    if iv["n"] < 2:
        return spec % iv["median"]
    return "%s [%s, %s]" % (spec % iv["median"], spec % iv["lo"],
                            spec % iv["hi"])


def fmt_ratio(iv, spec="%.2f"):
    """A ratio to the baseline: its median and interval, or, when the
    interval contains 1.0, "no difference" and the interval only, so that
    a median on either side of 1 is not read as a win or a loss."""
    if difference(iv) == "no difference":
        return "no difference [%s, %s]" % (spec % iv["lo"], spec % iv["hi"])
    return fmt_interval(iv, spec)
