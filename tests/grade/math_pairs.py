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
