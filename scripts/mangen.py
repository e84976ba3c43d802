#!/usr/bin/env python3
"""mangen.py - turns one docs/man/*.txt page into a roff man page or into
the C string that the command prints for --help, so the two cannot drift.

  mangen.py roff docs/man/prof-record.txt build/man/prof-record.1
  mangen.py help docs/man/prof-record.txt build/gen/help-prof-record.h

The source format (see docs/man/README.md):
  line 1          NAME(1) -- one-line summary
  CAPS LINE       a section (SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS...)
  "  text"        (SYNOPSIS) one usage line; elsewhere a preformatted line
  "-x, --long A"  an option term (or any line followed by "    "-indented
                  lines): the indented lines below describe it
  other text      paragraphs, separated by blank lines
"""
import re
import sys
import textwrap

def parse(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    m = re.match(r"^(\S+)\((\d)\) -- (.*)$", lines[0])
    if not m:
        sys.exit(f"{path}:1: want 'NAME(1) -- summary'")
    page = {"name": m.group(1), "section": m.group(2), "summary": m.group(3), "sections": []}
    cur = None
    for n, line in enumerate(lines[1:], 2):
        if re.match(r"^[A-Z][A-Z ]+$", line):
            cur = {"title": line, "items": []}
            page["sections"].append(cur)
            continue
        if cur is None:
            if line.strip():
                sys.exit(f"{path}:{n}: text before the first section")
            continue
        items = cur["items"]
        if not line.strip():
            items.append(("blank", ""))
        elif line.startswith("-"):
            items.append(("term", line, []))
        elif line.startswith("    ") and items and items[-1][0] == "term":
            items[-1][2].append(line.strip())
        elif line.startswith("    ") and items and items[-1][0] == "text":
            items[-1] = ("term", items[-1][1], [line.strip()])
        elif line.startswith("  "):
            items.append(("pre", line[2:]))
        else:
            items.append(("text", line))
    return page

def roff_escape(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s[:1] in (".", "'") else s

def to_roff(page):
    out = [f'.TH {page["name"].upper()} {page["section"]} "" "prof" "prof manual"',
           ".SH NAME", f'{roff_escape(page["name"])} \\- {roff_escape(page["summary"])}']
    for sec in page["sections"]:
        out.append(f'.SH {sec["title"]}')
        in_pre = False
        for it in sec["items"]:
            kind = it[0]
            if kind == "pre" and not in_pre:
                out.append(".nf")
                in_pre = True
            elif kind != "pre" and in_pre:
                out.append(".fi")
                in_pre = False
            if kind == "blank":
                out.append(".PP")
            elif kind == "text":
                out.append(roff_escape(it[1]))
            elif kind == "pre":
                out.append(roff_escape(it[1]))
            elif kind == "term":
                out.append(".TP")
                out.append(f'.B {roff_escape(it[1])}')
                out.extend(roff_escape(d) for d in it[2])
        if in_pre:
            out.append(".fi")
    return "\n".join(out) + "\n"

def to_help(page):
    out = []
    for sec in page["sections"]:
        title = sec["title"]
        if title in ("SEE ALSO",):
            continue
        if title == "SYNOPSIS":
            usage = [it[1] for it in sec["items"] if it[0] == "pre"]
            for i, u in enumerate(usage):
                out.append(("usage: " if i == 0 else "   or: ") + u)
            out.append("")
            continue
        kinds = {it[0] for it in sec["items"]}
        if title not in ("DESCRIPTION", "OPTIONS") and kinds <= {"text", "blank"}:
            # "exit status: 0 ...": a prose section reads as one paragraph
            words = " ".join(it[1] for it in sec["items"] if it[0] == "text")
            out.extend(textwrap.wrap(title.lower() + ": " + words, 78,
                                     break_on_hyphens=False))
            out.append("")
            continue
        if title not in ("DESCRIPTION", "OPTIONS"):
            out.append(title.lower() + ":")
        for it in sec["items"]:
            if it[0] == "blank":
                if out and out[-1] != "":
                    out.append("")
            elif it[0] == "text":
                out.append(it[1])
            elif it[0] == "pre":
                out.append("  " + it[1])
            elif it[0] == "term":
                term = "  " + it[1]
                desc = textwrap.wrap(" ".join(it[2]), 78 - 26, break_on_hyphens=False) or [""]
                if desc and len(term) <= 24:
                    out.append(f"{term:<26}{desc.pop(0)}")
                else:
                    out.append(term)
                out.extend(" " * 26 + d for d in desc)
        if out and out[-1] != "":
            out.append("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"

def c_string(name, text):
    ident = "help_" + re.sub(r"\W", "_", name)
    body = "".join('\t"' + l.replace("\\", "\\\\").replace('"', '\\"') + '\\n"\n'
                   for l in text.rstrip("\n").split("\n"))
    return (f"/* generated by scripts/mangen.py from docs/man/{name}.txt: do not edit */\n"
            f"static const char {ident}[] =\n{body};\n")

def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("roff", "help", "text"):
        sys.exit(__doc__)
    page = parse(sys.argv[2])
    if sys.argv[1] == "roff":
        data = to_roff(page)
    elif sys.argv[1] == "help":
        data = c_string(page["name"], to_help(page))
    else:
        data = to_help(page)
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        f.write(data)

main()
