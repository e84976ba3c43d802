"""pyimports.py - an import-heavy start, as pytest's collection or a big
application's: N generated modules imported one after the other, each
doing a few milliseconds of work in its body.  A module's code object is
freed once its import is over (and its memory soon reused), so most
samples of this program fall in code that no longer exists when the
recorder names it, unless it names it soon after the sample.

    python3 pyimports.py [--pyc] N

The modules are written to a fresh temporary directory (removed at the
end), named pyimp_mod_<i>.py; their bodies call helper_<i>.  With --pyc
they are compiled to .pyc files first and imported from those, as an
installed package is: a module body's names are then the strings marshal
made, freed with its code object, where the compiler's are interned.
"""
import compileall
import importlib
import os
import shutil
import sys
import tempfile

BODY = """def helper_{i}(x):
    return x * {i}

total = 0
for k in range(60000):
    total += helper_{i}(k) & 7
"""


def main(n, pyc):
    d = tempfile.mkdtemp(prefix="pyimports.")
    try:
        for i in range(n):
            with open(os.path.join(d, "pyimp_mod_%d.py" % i), "w") as f:
                f.write(BODY.format(i=i))
        sys.path.insert(0, d)
        if pyc:
            compileall.compile_dir(d, quiet=1)
        sys.dont_write_bytecode = True
        importlib.invalidate_caches()
        for i in range(n):
            importlib.import_module("pyimp_mod_%d" % i)
    finally:
        shutil.rmtree(d)


main(int(sys.argv[-1]), sys.argv[1] == "--pyc")
