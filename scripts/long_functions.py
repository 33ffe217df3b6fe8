#!/usr/bin/env python3
"""Lists the C++ functions in src/ longer than a limit (150 lines by default).

    scripts/long_functions.py [--limit N] [ROOT ...]

A function's length counts the lines from the first line of its signature to
its closing brace. The scan counts braces after removing comments, string and
character literals (raw strings included) and preprocessor lines, which is
enough for this tree's code: a body is a brace block opened at namespace or
class scope after a header with a parameter list that is not a class, struct,
enum or namespace (a TEST(...) body counts; lambdas count within the function
that holds them). Prints "LINES  path:line  name" per function over the limit,
longest first; exits 1 when there is any, 0 otherwise.
"""
import argparse
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cc")
NOT_A_FUNCTION = re.compile(r"^\s*(template\s*<.*>\s*)?(class|struct|union|enum|namespace)\b", re.S)
# A constructor header whose last initializer so far is a brace one: `) : a_(x), b_`.
MEMBER_INIT_BRACE = re.compile(r"\)\s*(?:noexcept\s*)?:[^:].*[\w>]$", re.S)


def strip_code(text):
    """The text with comments, literals and preprocessor lines blanked out
    (newlines kept, so offsets still map to the same line numbers)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            j = text.find(")" + delim + '"', open_paren)
            j = n if j < 0 else j + len(delim) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(" ")  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The name before a function header's parameter list (with the arguments
    of a TEST macro, which name the test)."""
    before, _, rest = header.partition("(")
    m = re.search(r"([~\w:]+)\s*$", before)
    name = m.group(1) if m else before.strip()[:60]
    if name.startswith("TEST"):
        name += "(" + " ".join(rest.split(")")[0].split()) + ")"
    return name


def closing_brace(code, k):
    """The offset of the brace that closes the one at `k`."""
    depth = 0
    for j in range(k, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def long_functions(path, limit):
    text = open(path, encoding="utf-8", errors="replace").read()
    code = strip_code(text)
    found = []
    # Each open scope: (kind, start offset, header); kind is "scope" (file,
    # namespace, class: where a function may begin), "function" or "block".
    stack = [("scope", 0, "")]
    header_start = 0  # where the text before the next brace began
    k = 0
    while k < len(code):
        c = code[k]
        if c == ";":
            header_start = k + 1
        elif c == "{":
            header = code[header_start:k]
            kind = "block"
            if stack[-1][0] == "scope":
                before_params = header.split("(")[0]
                if NOT_A_FUNCTION.match(header) or not header.strip() or \
                        re.match(r"^\s*extern\s*$", header):
                    kind = "scope"
                elif ")" in header and ("operator" in before_params or "=" not in before_params):
                    kind = "function"
                    if MEMBER_INIT_BRACE.search(header):
                        # `Foo::Foo(...) : a_{x}, b_(y) {`: a member's brace
                        # initializer, part of the header still.
                        k = closing_brace(code, k) + 1
                        continue
            lead = len(header) - len(header.lstrip())
            stack.append((kind, header_start + lead, header))
            header_start = k + 1
        elif c == "}":
            opened = stack.pop() if len(stack) > 1 else ("scope", 0, "")
            if opened[0] == "function":
                first = code.count("\n", 0, opened[1]) + 1
                last = code.count("\n", 0, k) + 1
                if last - first + 1 > limit:
                    found.append((last - first + 1, first, function_name(opened[2])))
            header_start = k + 1
        k += 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("roots", nargs="*")
    args = parser.parse_args()
    roots = args.roots or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]
    rows = []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(dirpath, name)
                    for lines, line, fn in long_functions(path, args.limit):
                        rows.append((lines, os.path.relpath(path), line, fn))
    for lines, path, line, fn in sorted(rows, reverse=True):
        print(f"{lines:5d}  {path}:{line}  {fn}")
    return 1 if rows else 0


if __name__ == "__main__":
    sys.exit(main())
