"""A labelled table of (reply, reference, equivalent?) answer pairs for MathEqual.

Written here by hand (no downloaded data); each label is the mathematical truth, not what any checker says.
Shared by tests/grade/test_verifiers_math.py and benchmarks/bench_math_equal.py.
"""

from __future__ import annotations

# (category, reply, reference, label)
MATH_PAIRS: list[tuple[str, str, str, bool]] = [
    # integers
    ("integer", "The answer is 42.", "42", True),
    ("integer", "The answer is 41.", "42", False),
    ("integer", "\\boxed{-7}", "-7", True),
    ("integer", "\\boxed{7}", "-7", False),
    ("integer", "Total: 1,000,000", "1000000", True),
    ("integer", "We compute 2+2.\nThe result = 4", "4", True),
    ("integer", "\\boxed{0}", "0", True),
    # big integers (exact: answers mod 10^9+7 differ in the last digit)
    ("big integer", "\\boxed{1000000008}", "1000000007", False),
    ("big integer", "\\boxed{1000000007}", "1000000007", True),
    ("big integer", "\\boxed{123456789012345678901234567890}", "123456789012345678901234567890", True),
    ("big integer", "\\boxed{123456789012345678901234567891}", "123456789012345678901234567890", False),
    ("big integer", "\\boxed{" + str(10**400) + "}", str(10**400), True),
    ("big integer", "\\boxed{" + str(10**400 + 1) + "}", str(10**400), False),
    ("big integer", "Final answer: 1.5e3", "1500", True),
    ("big integer", "so it is 1e400", "1", False),
    # fractions
    ("fraction", "\\boxed{\\frac12}", "0.5", True),
    ("fraction", "so we get \\boxed{\\frac{3}{4}}", "0.75", True),
    ("fraction", "\\boxed{\\dfrac{-1}{2}}", "-1/2", True),
    ("fraction", "\\boxed{\\frac{2}{3}}", "0.75", False),
    ("fraction", "\\boxed{\\frac{2}{4}}", "\\frac{1}{2}", True),
    ("fraction", "\\boxed{3/4}", "\\frac{3}{4}", True),
    ("fraction", "\\boxed{\\frac{4}{3}}", "\\frac{3}{4}", False),
    # decimals
    ("decimal", "\\boxed{0.25}", "\\frac{1}{4}", True),
    ("decimal", "\\boxed{0.3334}", "\\frac{1}{3}", False),
    ("decimal", "\\boxed{2.50}", "2.5", True),
    ("decimal", "\\boxed{2.51}", "2.5", False),
    ("decimal", "\\boxed{1000000007.0}", "1000000007", True),
    ("decimal", "\\boxed{1000000007.4}", "1000000007", False),
    # LaTeX
    ("latex", "$2\\sqrt{2}$", "\\sqrt{8}", True),
    ("latex", "$2\\sqrt{3}$", "\\sqrt{8}", False),
    ("latex", "x = \\boxed{\\pi}", "3.14159265358979", True),
    ("latex", "\\boxed{\\frac{\\pi}{4}}", "\\frac{\\pi}{2}", False),
    ("latex", "answer is \\boxed{\\left(\\frac{1}{3}\\right)}", "\\frac{1}{3}", True),
    ("latex", "\\boxed{\\binom{5}{2}}", "10", True),
    ("latex", "\\boxed{\\binom{5}{2}}", "2", False),
    ("latex", "\\boxed{2^{10}}", "1024", True),
    # \boxed extraction
    ("boxed", "First \\boxed{3} then, correcting myself, \\boxed{5}", "5", True),
    ("boxed", "\\boxed{\\frac{1}{\\sqrt{4}}}", "\\frac{1}{2}", True),
    ("boxed", "I think the answer is \\boxed{\\text{(C)}}", "C", True),
    ("boxed", "\\boxed{B}", "C", False),
    ("boxed", "no idea", "42", False),
    ("boxed", "", "1", False),
    # sets
    ("set", "\\boxed{\\{1,2,3\\}}", "\\{3,2,1\\}", True),
    ("set", "\\boxed{\\{1,2\\}}", "\\{1,2,3\\}", False),
    ("set", "\\boxed{\\{-1, 1\\}}", "\\{1,-1\\}", True),
    ("set", "\\boxed{\\{1,2,4\\}}", "\\{1,2,3\\}", False),
    # tuples
    ("tuple", "\\boxed{(1, 2)}", "(1,2)", True),
    ("tuple", "\\boxed{(2, 1)}", "(1,2)", False),
    ("tuple", "\\boxed{(3, -4, 5)}", "(3,-4,5)", True),
    ("tuple", "\\boxed{(3, 4, 5)}", "(3,-4,5)", False),
    # open/closed intervals
    ("interval", "$[2, 5)$", "[2, 5)", True),
    ("interval", "$[2, 5)$", "(2, 5)", False),
    ("interval", "$[2, 5]$", "[2, 5)", False),
    ("interval", "\\boxed{(-\\infty, 3]}", "(-\\infty, 3]", True),
    ("interval", "\\boxed{(-\\infty, 3)}", "(-\\infty, 3]", False),
    # expressions
    ("expression", "$(x+1)^2$", "x^2+2x+1", True),
    ("expression", "$x^2+2$", "x+2", False),
    ("expression", "\\boxed{2x + 2}", "2(x+1)", True),
    ("expression", "\\boxed{\\frac{x^2-1}{x-1}}", "x+1", True),
    ("expression", "\\boxed{x^2-1}", "(x-1)(x+1)", True),
    ("expression", "\\boxed{x^2+1}", "(x-1)(x+1)", False),
    ("expression", "\\boxed{x=3}", "3", True),
    # units
    ("units", "\\boxed{10 \\text{ cm}}", "10", True),
    ("units", "\\boxed{12 \\text{ cm}}", "10", False),
    ("units", "The total is \\boxed{5 \\text{ dollars}}", "5", True),
    ("units", "\\boxed{45^\\circ}", "45", True),
    # percentages
    ("percent", "answer: 50%", "50", True),
    ("percent", "\\boxed{12.5\\%}", "12.5", True),
    ("percent", "\\boxed{25\\%}", "50", False),
]


def _scientific_pairs() -> list[tuple[str, str, str, bool]]:
    """Tiny and huge magnitudes in every notation: equal values pass, values 20% or 1e-7 relative apart fail."""
    out: list[tuple[str, str, str, bool]] = []
    for exp in (-30, -12, -8, -7, -3, 3, 8, 12, 30):
        for mant, other in ((1.5, 1.2), (4, 9), (2.5, 2.5000003)):
            ref = f"{mant}\\times10^{{{exp}}}"
            out.append(("scientific", f"\\boxed{{{mant}e{exp}}}", ref, True))
            out.append(("scientific", f"The answer is ${other}\\times 10^{{{exp}}}$", ref, other == mant))
    return out


# issue 28: a second table (>= 100 pairs) aimed at the false passes the absolute tolerance, hedges and bare LaTeX
# made: scientific notation, tiny and huge numbers, hedges, LaTeX without delimiters, units, intervals, sets
MATH_PAIRS_28: list[tuple[str, str, str, bool]] = _scientific_pairs() + [
    # tiny / huge decimals against each other (the old absolute 1e-6 passed all the False ones)
    ("tiny", "1.2e-7", "1.5e-7", False),
    ("tiny", "0.00000012", "0.00000012", True),
    ("tiny", "$4\\times10^{-8}$", "9\\times10^{-8}", False),
    ("tiny", "\\boxed{0.0000001}", "0", False),
    ("tiny", "\\boxed{0}", "0", True),
    ("tiny", "\\boxed{0.000000000000001}", "0", True),  # inside the floor near zero (MATH_ZERO_FLOOR)
    ("tiny", "\\boxed{3\\times10^{-9}}", "3e-9", True),
    ("tiny", "\\boxed{3.1\\times10^{-9}}", "3e-9", False),
    ("huge", "\\boxed{6.022\\times10^{23}}", "6.022e23", True),
    ("huge", "\\boxed{6.023\\times10^{23}}", "6.022e23", False),
    ("huge", "\\boxed{602200000000000000000000}", "6.022\\times10^{23}", True),
    ("huge", "\\boxed{1e20}", "100000000000000000001", False),
    ("huge", "\\boxed{7.0000001}", "7", False),
    ("huge", "\\boxed{7.000}", "7", True),
    ("huge", "\\boxed{3.14159265358979}", "\\pi", True),
    ("huge", "\\boxed{3.1416}", "\\pi", False),
    # hedges: two different final answers offered as alternatives
    ("hedge", "\\boxed{3} or \\boxed{4}", "4", False),
    ("hedge", "\\boxed{3} or \\boxed{4}", "3", False),
    ("hedge", "It is \\boxed{4}, or maybe \\boxed{5}", "4", False),
    ("hedge", "\\boxed{\\frac12} / \\boxed{0.6}", "0.5", False),
    ("hedge", "\\boxed{4} or \\boxed{4.0}", "4", True),
    ("hedge", "\\boxed{3 \\text{ or } 4}", "4", False),
    ("hedge", "I first got \\boxed{3}. Checking again, the mistake was a sign, so the answer is \\boxed{4}", "4", True),
    ("hedge", "\\boxed{x=2} or \\boxed{x=-2}", "2", False),
    # LaTeX without delimiters
    ("bare latex", "\\frac{1}{2}", "0.5", True),
    ("bare latex", "The answer is \\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}", True),
    ("bare latex", "The answer is \\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt3}{2}", False),
    ("bare latex", "x = 2\\sqrt{2}", "\\sqrt{8}", True),
    ("bare latex", "x = 2\\sqrt{3}", "\\sqrt{8}", False),
    ("bare latex", "So the area is 4\\pi", "4\\pi", True),
    ("bare latex", "So the area is 2\\pi", "4\\pi", False),
    ("bare latex", "Therefore the answer is \\dfrac{7}{3}.", "7/3", True),
    ("bare latex", "Therefore the answer is \\dfrac{3}{7}.", "7/3", False),
    ("bare latex", "Answer: \\binom{6}{3}", "20", True),
    ("bare latex", "Answer: \\binom{6}{2}", "20", False),
    ("bare latex", "the value is 3^{4}", "81", True),
    ("bare latex", "the value is \\sqrt[3]{27}", "3", True),
    ("bare latex", "the value is \\sqrt[3]{28}", "3", False),
    # currency and units, as math-verify reads them
    ("units", "\\boxed{\\$5.00}", "5", True),
    ("units", "\\boxed{5.00}", "\\$5.00", True),
    ("units", "\\boxed{\\$5.50}", "\\$5.00", False),
    ("units", "The cost is $\\$12$.", "12", True),
    ("units", "\\boxed{13 \\text{ dollars}}", "\\$12", False),
    ("units", "\\boxed{3 \\text{ m}}", "3", True),
    ("units", "\\boxed{4 \\text{ m}}", "3", False),
    ("units", "\\boxed{90^\\circ}", "90", True),
    ("units", "\\boxed{60^\\circ}", "90", False),
    ("units", "\\boxed{2.5 \\text{ kg}}", "2.5", True),
    # intervals
    ("interval", "\\boxed{(0, 1]}", "(0, 1]", True),
    ("interval", "\\boxed{[0, 1]}", "(0, 1]", False),
    ("interval", "\\boxed{(0.5, 2)}", "(\\frac12, 2)", True),
    ("interval", "\\boxed{(0.5000001, 2)}", "(\\frac12, 2)", False),
    ("interval", "\\boxed{[-3, \\infty)}", "[-3, \\infty)", True),
    ("interval", "\\boxed{(-3, \\infty)}", "[-3, \\infty)", False),
    ("interval", "\\boxed{(-\\infty, -1) \\cup (1, \\infty)}", "(-\\infty,-1)\\cup(1,\\infty)", True),
    ("interval", "\\boxed{(-\\infty, -1] \\cup (1, \\infty)}", "(-\\infty,-1)\\cup(1,\\infty)", False),
    # sets
    ("set", "\\boxed{\\{2, 3\\}}", "\\{3, 2\\}", True),
    ("set", "\\boxed{\\{2, 3, 5\\}}", "\\{3, 2\\}", False),
    ("set", "\\boxed{\\{0.5, 2\\}}", "\\{\\frac12, 2\\}", True),
    ("set", "\\boxed{\\{-2, 2\\}}", "\\{2\\}", False),
    ("set", "\\boxed{\\{\\sqrt{4}, 3\\}}", "\\{2, 3\\}", True),
    ("set", "\\boxed{\\emptyset}", "\\{1\\}", False),
]
