#!/usr/bin/env python3
"""The largest source files and the longest functions of src/ (rustfmt-formatted code).

    python3 scripts/sizes.py [N]     # the N largest of each (default 5)

A function runs from its `fn` line to the `}` at the same indent; test modules count too.
"""
import os
import re
import sys

FN = re.compile(r"^(\s*)(pub(\([^)]*\))? )?(async )?(const )?(unsafe )?fn (\w+)")


def main():
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    files, fns = [], []
    for root, _, names in os.walk("src"):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            lines = open(path, encoding="utf-8").read().split("\n")
            files.append((len(lines) - 1, path))
            for i, line in enumerate(lines):
                m = FN.match(line)
                if not m or line.rstrip().endswith(";"):
                    continue
                close = m.group(1) + "}"
                j = i
                while j < len(lines) and lines[j].rstrip() != close:
                    j += 1
                fns.append((j - i + 1, f"{path}:{i + 1}", m.group(7)))
    print("largest files (lines):")
    for n, path in sorted(files, reverse=True)[:top]:
        print(f"  {n:5}  {path}")
    print("longest functions (lines):")
    for n, where, name in sorted(fns, reverse=True)[:top]:
        print(f"  {n:5}  {name}  {where}")


if __name__ == "__main__":
    main()
