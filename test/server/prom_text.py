#!/usr/bin/env python3
"""A strict parser of the Prometheus text exposition format 0.0.4.

No Debian package ships one, so the monitoring tests use this. It checks what a Prometheus
server would reject or misread:
- metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*;
- label values are double-quoted with only \\\\, \\" and \\n escapes; no duplicate label names;
- values are Go floats (digits, exponent, NaN, +Inf, -Inf); an optional integer timestamp;
- "# TYPE" names a type (counter, gauge, histogram, summary, untyped), at most once per family and
  before the family's samples; "# HELP" at most once per family;
- a family's samples are contiguous (a family seen again later is an error);
- no duplicate series (same name and labels); the text ends with a newline.

Usage: prom_text.py FILE        prints "ok: N families, M samples" or the errors (exit 1).
As a module: parse(text) -> (families, samples), raising ParseError.
"""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
FLOAT = re.compile(r"^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|NaN|[+-]Inf)$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


class ParseError(Exception):
    pass


def _family_of(name, families):
    """The family a sample belongs to (histogram/summary samples carry a suffix)."""
    if name in families:
        return name
    for fam, info in families.items():
        for suffix in SUFFIXES.get(info.get("type"), ()):
            if name == fam + suffix:
                return fam
    return name


def _parse_labels(text, lineno):
    labels = {}
    i = 0
    while i < len(text):
        m = re.match(r"\s*(" + LABEL + r")\s*=\s*\"", text[i:])
        if not m:
            raise ParseError(f"line {lineno}: bad label at '{text[i:]}'")
        name = m.group(1)
        i += m.end()
        value = []
        while True:
            if i >= len(text):
                raise ParseError(f"line {lineno}: unterminated label value of {name}")
            c = text[i]
            if c == "\\":
                if i + 1 >= len(text) or text[i + 1] not in '\\"n':
                    raise ParseError(f"line {lineno}: bad escape in label {name}")
                value.append({"\\": "\\", '"': '"', "n": "\n"}[text[i + 1]])
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise ParseError(f"line {lineno}: newline in label value of {name}")
            else:
                value.append(c)
                i += 1
        if name in labels:
            raise ParseError(f"line {lineno}: duplicate label {name}")
        labels[name] = "".join(value)
        rest = text[i:].lstrip()
        if rest.startswith(","):
            i = len(text) - len(rest) + 1
        elif rest == "":
            break
        else:
            raise ParseError(f"line {lineno}: expected ',' after label {name}, got '{rest}'")
    return labels


def _value(text, lineno):
    if not FLOAT.match(text):
        raise ParseError(f"line {lineno}: '{text}' is not a float")
    return float(text.replace("Inf", "inf"))


def parse(text):
    if text and not text.endswith("\n"):
        raise ParseError("the text does not end with a newline")
    families = {}  # name -> {"type", "help", "closed"}
    samples = []
    seen = set()
    current = None
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        if line.strip() == "":
            continue
        if line.startswith("#"):
            m = re.match(r"^#\s+(HELP|TYPE)\s+(" + NAME + r")(?:\s(.*))?$", line)
            if not m:
                continue  # a plain comment
            kind, name, rest = m.group(1), m.group(2), m.group(3) or ""
            fam = families.setdefault(name, {"samples": 0})
            if fam.get("closed"):
                raise ParseError(f"line {lineno}: family {name} appears again after other families")
            if current is not None and current != name:
                families[current]["closed"] = True
            current = name
            if kind == "TYPE":
                if "type" in fam:
                    raise ParseError(f"line {lineno}: second TYPE for {name}")
                if fam["samples"]:
                    raise ParseError(f"line {lineno}: TYPE for {name} after its samples")
                if rest.strip() not in TYPES:
                    raise ParseError(f"line {lineno}: unknown type '{rest}' for {name}")
                fam["type"] = rest.strip()
            else:
                if "help" in fam:
                    raise ParseError(f"line {lineno}: second HELP for {name}")
                if re.search(r"\\[^\\n]", rest.replace("\\\\", "")):
                    raise ParseError(f"line {lineno}: bad escape in HELP of {name}")
                fam["help"] = rest
            continue
        m = re.match(r"^(" + NAME + r")(\{(.*)\})?\s+(\S+)(\s+(-?\d+))?\s*$", line)
        if not m:
            raise ParseError(f"line {lineno}: not a sample: '{line}'")
        name = m.group(1)
        labels = _parse_labels(m.group(3), lineno) if m.group(3) else {}
        value = _value(m.group(4), lineno)
        fam_name = _family_of(name, families)
        fam = families.setdefault(fam_name, {"samples": 0})
        if fam.get("closed"):
            raise ParseError(f"line {lineno}: sample of {fam_name} after other families")
        if current is not None and current != fam_name:
            families[current]["closed"] = True
        current = fam_name
        fam["samples"] += 1
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            raise ParseError(f"line {lineno}: duplicate series {name}{labels}")
        seen.add(key)
        samples.append({"name": name, "labels": labels, "value": value})
    return families, samples


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        families, samples = parse(text)
    except ParseError as e:
        print(f"{argv[1]}: {e}")
        return 1
    print(f"ok: {len(families)} families, {len(samples)} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
