"""distconv's .npy header parser against NumPy's own reader, file by file.

Writes a corpus of .npy headers: NumPy's writer (every version, distconv's
types and others, C and Fortran order), hand-written dictionaries at the
edges of Python's literal syntax and of NumPy's checks, and random edits of
valid dictionaries. For each, NumPy's verdict is what np.load's header
reading (numpy.lib.format.read_magic, _read_array_header) returns or
raises; the tool (io/npy_header_tool.cc) prints distconv's. They must
agree: where NumPy reads a header distconv reads (its element types in its
spellings, C order, extents from 0 to 2^50), distconv reads the same shape
and type; everywhere else distconv refuses (and names why).

    npy_header_numpy_test.py TOOL
"""

import io
import os
import random
import struct
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from numpy.lib import format as npy_format

OURS = {
    np.dtype('<f4'): 'float32',
    np.dtype('<f8'): 'float64',
    np.dtype('<i8'): 'int64',
    np.dtype('u1'): 'uint8',
}
# The descr spellings distconv reads (io/npy_header.h); NumPy reads more.
SPELLINGS = set()
for body in ['f4', 'f', 'f8', 'd', 'i8', 'q', 'l', 'u1', 'B']:
    for order in ['', '<', '=', '|']:
        SPELLINGS.add(order + body)
SPELLINGS |= {'>u1', '>B', 'float32', 'float64', 'int64', 'uint8'}


def header(dict_text, version=(1, 0), encoding=None):
    """The bytes of a header holding dict_text, padded as NumPy pads."""
    raw = dict_text.encode(encoding or ('utf8' if version == (3, 0) else
                                        'latin1'))
    length_bytes = 2 if version == (1, 0) else 4
    unpadded = 8 + length_bytes + len(raw) + 1
    raw += b' ' * ((unpadded + 63) // 64 * 64 - unpadded) + b'\n'
    length = struct.pack('<H' if length_bytes == 2 else '<I', len(raw))
    return b'\x93NUMPY' + bytes(version) + length + raw


def numpy_verdict(data):
    """(shape, dtype, fortran_order) as np.load reads the header, or None."""
    f = io.BytesIO(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            version = npy_format.read_magic(f)
            npy_format._check_version(version)
            return npy_format._read_array_header(f, version)
    except Exception:  # any refusal: ValueError, SyntaxError, TypeError, ...
        return None


def numpy_writes():
    """Headers NumPy's writer makes (with a byte of data after them)."""
    cases = []
    shapes = [(), (0,), (7,), (2, 3), (1, 16, 5, 5), (2, 4, 0, 5, 6),
              (3, 1, 2, 1, 2)]
    types = ['<f4', '<f8', '<i8', '|u1', '>f4', '<c8', '?', '<i4', '<f2',
             [('a', '<f4'), ('b', '<i8')], ('<f4', (2,))]
    for version in [(1, 0), (2, 0), (3, 0), None]:
        for shape in shapes:
            for t in types:
                for order in 'CF':
                    a = np.zeros(shape, dtype=np.dtype(t), order=order)
                    f = io.BytesIO()
                    with warnings.catch_warnings():
                        warnings.simplefilter('ignore')
                        npy_format.write_array(f, a, version=version)
                    cases.append(f.getvalue())
    return cases


KEYS = "'fortran_order': False, 'shape': (2, 3)"
EDGES = [
    # NumPy's own form, and spacing, quoting, order, trailing commas.
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
    "{'shape':(4,5),'fortran_order':False,'descr':'<i8'}",
    '{"descr": "<f8", "fortran_order": False, "shape": (2, 3)}',
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,),}",
    "{'descr':'|u1','fortran_order':False,'shape':()}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (7,)}",
    # Text after the dictionary, or before it.
    "{'descr': '<f4', " + KEYS + "} junk",
    "{'descr': '<f4', " + KEYS + "}}",
    "{'descr': '<f4', " + KEYS + "}\n{}",
    "{'descr': '<f4', " + KEYS + "} # a comment",
    "{'descr': '<f4', " + KEYS + "}\n# a comment\n",
    "# a comment\n{'descr': '<f4', " + KEYS + "}",
    "\n  {'descr': '<f4', " + KEYS + "}",
    "\n{'descr': '<f4', " + KEYS + "}",
    "\t{'descr': '<f4', " + KEYS + "}",
    "\x0c {'descr': '<f4', " + KEYS + "}",
    "\\\n{'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4', " + KEYS + "}\\\n",
    "{'descr': '<f4', " + KEYS + "}\\",
    "{'descr': '<f4', " + KEYS + "},",
    "{'descr': '<f4', " + KEYS + "}, 1",
    "{'descr': '<f4', " + KEYS + "};",
    # Keys given twice (the last wins), missing, extra, of other types.
    "{'descr': '<f8', 'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4', " + KEYS + ", 'shape': (9,)}",
    "{'descr': [1, {2: 3}], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [[], 1], 'descr': '<f4', " + KEYS + "}",
    "{[1]: 2, 'descr': '<f4', " + KEYS + "}",
    "{'descr': {[1]: 2}, 'descr': '<f4', " + KEYS + "}",
    "{'descr': {1, 2}, 'descr': '<f4', " + KEYS + "}",
    "{'descr': {1, [2]}, 'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4', 'shape': (2, 3)}",
    "{'descr': '<f4', " + KEYS + ", 'extra': 1}",
    "{'descr': '<f4', " + KEYS + ", 1: 1}",
    "{b'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4', " + KEYS + ", **{}}",
    "{**{'descr': '<f4'}, " + KEYS + "}",
    "['descr', '<f4']",
    "('descr', '<f4')",
    "",
    "{}",
    "set()",
    # Values of the wrong kind.
    "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': 'False', 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': None, 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': (False), 'shape': (2,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': 2}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2j,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (True, 3)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (False,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-0,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (+2, -(3))}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (--2,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (-(-2),)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1+2j,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1 + 2,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2 * 3,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1125899906842624,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1125899906842625,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3, 4, 5, 6)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': ((2), (3))}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': ((2, 3))}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': ((2, 3),)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}",
    # Number forms.
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0x10, 0o7, 0b11)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1_000, 0_0, 00)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0X1_f, 0B_1)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1__0,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (1_,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0x,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0o8,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0b2,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2 L, 0x3L)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2l,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2LL,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2L L,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2\n L,)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, L)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1.5L}",
    "{'descr': 1e5, 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1., .5, 1.e5, 1_0.0_1, 1e+5, 1E-5, 01.5, 00e1], "
    "'descr': '<f4', " + KEYS + "}",
    "{'descr': [1j, 1.5J, 01j, 1+2j, -1-2.5j, 1.5+0j], "
    "'descr': '<f4', " + KEYS + "}",
    "{'descr': [1e, 1e+], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1._5], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1_.5], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1jj], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1j+2j], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1+2+3j], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [True+1j], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [-True], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [+-1], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [-(1+2j)], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [(1+2j)], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1.real], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [1 .5], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [None, ..., set(), (), [], {}], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [set(1)], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [x], 'descr': '<f4', " + KEYS + "}",
    "{'descr': ['a'[0]], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [print()], 'descr': '<f4', " + KEYS + "}",
    "{'descr': [lambda: 1], 'descr': '<f4', " + KEYS + "}",
    # Nesting: Python's limit is 200 brackets deep.
    "{'descr': " + "(" * 199 + "1" + ")" * 199 + ", 'descr': '<f4', " + KEYS +
    "}",
    "{'descr': " + "[" * 200 + "]" * 200 + ", 'descr': '<f4', " + KEYS + "}",
    "{'descr': " + "(" * 200 + "1" + ")" * 200 + ", 'descr': '<f4', " + KEYS +
    "}",
    # Strings.
    "{'descr': \"<f4\", " + KEYS + "}",
    "{'descr': '''<f4''', " + KEYS + "}",
    "{'descr': \"\"\"<f4\"\"\", " + KEYS + "}",
    "{'descr': '<' 'f4', " + KEYS + "}",
    "{'descr': '<'\n'f4', " + KEYS + "}",
    "{'descr': ('<' 'f' '4'), " + KEYS + "}",
    "{'descr': u'<f4', " + KEYS + "}",
    "{'descr': U'<f4', " + KEYS + "}",
    "{'descr': r'<f4', " + KEYS + "}",
    "{'descr': R'<f4', " + KEYS + "}",
    "{'descr': b'<f4', " + KEYS + "}",
    "{'descr': rb'<f4', " + KEYS + "}",
    "{'descr': ur'<f4', " + KEYS + "}",
    "{'descr': f'<f4', " + KEYS + "}",
    "{'descr': '<' b'f4', " + KEYS + "}",
    "{'descr': '<\\x664', " + KEYS + "}",
    "{'descr': '<\\1464', " + KEYS + "}",
    "{'descr': '<\\u00664', " + KEYS + "}",
    "{'descr': '<\\U000000664', " + KEYS + "}",
    "{'descr': '<\\x6', " + KEYS + "}",
    "{'descr': '<\\N{LATIN SMALL LETTER F}4', " + KEYS + "}",
    "{'descr': '<f\\\n4', " + KEYS + "}",
    "{'descr': '<f\n4', " + KEYS + "}",
    "{'descr': '''<f\n4''', " + KEYS + "}",
    "{'descr': '<f4\\q', " + KEYS + "}",
    "{'descr': '<f4, " + KEYS + "}",
    "{'descr': r'\\', " + KEYS + "}",
    "{'descr': [b'\\xff', b'\\u1234', '\\U00110000'], 'descr': '<f4', " +
    KEYS + "}",
    "{'descr': [b'\u00e9'], 'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4\u00e9', " + KEYS + "}",
    "{'d\u00e9': 1, 'descr': '<f4', " + KEYS + "}",
    "{'descr': '<f4', " + KEYS + "} \u00e9",
    "{'descr': '<f4', " + KEYS + "} # \u00e9",
    "{'descr': '<f4', " + KEYS + "}\x00",
    "{'descr': '<f4', " + KEYS + "}# \x00",
    # Line breaks, continuations, comments inside the dictionary.
    "{'descr': '<f4', # the type\n 'fortran_order': False,\n 'shape': (2,\n"
    " 3)}",
    "{'descr': '<f4', \\\n 'fortran_order': False, 'shape': (2, 3)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)\r\n}",
    "{'descr': '<f4',\r'fortran_order': False, 'shape': (2, 3)}",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\r\n",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) \\ }",
    # Element types and their spellings.
    "{'descr': '>f4', " + KEYS + "}",
    "{'descr': '=f4', " + KEYS + "}",
    "{'descr': '|f4', " + KEYS + "}",
    "{'descr': 'f4', " + KEYS + "}",
    "{'descr': 'f', " + KEYS + "}",
    "{'descr': 'd', " + KEYS + "}",
    "{'descr': 'float32', " + KEYS + "}",
    "{'descr': 'float64', " + KEYS + "}",
    "{'descr': '<float32', " + KEYS + "}",
    "{'descr': 'int64', " + KEYS + "}",
    "{'descr': 'q', " + KEYS + "}",
    "{'descr': '<l', " + KEYS + "}",
    "{'descr': '<i4', " + KEYS + "}",
    "{'descr': '>u1', " + KEYS + "}",
    "{'descr': 'B', " + KEYS + "}",
    "{'descr': 'uint8', " + KEYS + "}",
    "{'descr': '<u1', " + KEYS + "}",
    "{'descr': '1f4', " + KEYS + "}",
    "{'descr': '<c8', " + KEYS + "}",
    "{'descr': '<f2', " + KEYS + "}",
    "{'descr': '', " + KEYS + "}",
    "{'descr': 'f4 ', " + KEYS + "}",
    "{'descr': [('a', '<f4')], " + KEYS + "}",
    "{'descr': ('<f4', (2,)), " + KEYS + "}",
    "{'descr': 4, " + KEYS + "}",
]


def edits(rng, text, count):
    """`text` with `count` random insertions, deletions and replacements."""
    alphabet = list("'\"{}()[],:#\\ \n\t0123456789Lljxeo_.+-TrueFalsN") + [
        "'descr'", "'shape'", "(2, 3)", "False", "'<f4'", "u'", "b'",
        "\u00e9", "\x00"]
    s = text
    for _ in range(count):
        i = rng.randrange(len(s) + 1)
        op = rng.randrange(3)
        piece = rng.choice(alphabet)
        if op == 0:
            s = s[:i] + piece + s[i:]
        elif op == 1:
            s = s[:i] + s[i + rng.randrange(1, 4):]
        else:
            s = s[:i] + piece + s[i + 1:]
    return s


def corpus():
    cases = [(f'numpy_writer_{i}', data)
             for i, data in enumerate(numpy_writes())]
    for i, text in enumerate(EDGES):
        for version in [(1, 0), (2, 0), (3, 0)]:
            name = f'edge_{i}_v{version[0]}'
            try:
                cases.append((name, header(text, version)))
            except UnicodeEncodeError:
                pass
    # Version, encoding and length limits.
    good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    for minor in [1, 2]:
        data = bytearray(header(good))
        data[7] = minor
        cases.append((f'minor_{minor}', bytes(data)))
    for major in [0, 4]:
        data = bytearray(header(good))
        data[6] = major
        cases.append((f'major_{major}', bytes(data)))
    for n in [9000, 9999, 10000, 10001, 20000]:
        text = good + ' ' * (n - len(good) - 1)
        cases.append((f'length_{n}', header(text, (2, 0))))
    cases.append(('utf8_in_v3', header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } "
        "# \u00e9\u4e2d", (3, 0))))
    cases.append(('latin1_in_v3', header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } # \u00e9",
        (3, 0), encoding='latin1')))
    cases.append(('long_utf8_v3', header(
        good + ' #' + '\u00e9' * 4990, (3, 0))))
    cases.append(('too_long_utf8_v3', header(
        good + ' #' + '\u00e9' * 5100, (3, 0))))
    rng = random.Random(20261127)
    seeds = [good, "{'shape':(4,5),'fortran_order':False,'descr':'<i8'}",
             "{'descr': '|u1', 'fortran_order': False, 'shape': (2L, 3L)}",
             "{'descr': '<f8', 'fortran_order': False, 'shape': (0x1, 2_0,),}"]
    for i in range(3000):
        text = edits(rng, rng.choice(seeds), rng.randrange(1, 4))
        version = rng.choice([(1, 0), (2, 0), (3, 0)])
        try:
            cases.append((f'edit_{i}_v{version[0]}', header(text, version)))
        except UnicodeEncodeError:
            pass
    return cases


def expected(verdict):
    """What distconv must do with a header np.load reads as `verdict`:
    ('OK', shape, type) or ('REFUSED', why)."""
    if verdict is None:
        return ('REFUSED', 'np.load refuses it')
    shape, fortran, dtype = verdict
    if dtype not in OURS:
        return ('REFUSED', 'an element type distconv does not read')
    if fortran:
        return ('REFUSED', 'Fortran order')
    if any(x < 0 for x in shape) or any(x > 2**50 for x in shape):
        return ('REFUSED', 'an extent distconv does not read')
    volume = 1
    for x in shape:
        volume *= int(x)
    if len(shape) > 5 or volume > 2**50:
        return ('REFUSED', 'a shape distconv does not read')
    return ('OK', 'x'.join(str(int(x)) for x in shape) or '()', OURS[dtype])


def main():
    tool = sys.argv[1]
    cases = corpus()
    with tempfile.TemporaryDirectory(dir=os.environ.get('TEST_TMPDIR')) as d:
        paths = []
        for name, data in cases:
            path = os.path.join(d, name + '.npy')
            with open(path, 'wb') as f:
                f.write(data)
            paths.append(path)
        out = subprocess.run([tool] + paths, check=True, capture_output=True,
                             text=True, errors='replace').stdout
        ours = {}
        for line in out.splitlines():
            fields = line.split('\t')
            ours[fields[0]] = fields[1:]
        failures = 0
        counts = {'both read': 0, 'both refuse': 0,
                  'numpy reads, distconv refuses as it must': 0,
                  'numpy reads a spelling distconv refuses': 0,
                  'numpy reads a \\N{...} escape distconv refuses': 0}
        for (name, data), path in zip(cases, paths):
            verdict = numpy_verdict(data)
            want = expected(verdict)
            got = ours[path]
            text = data[10:].decode('latin1').strip()[:160]
            if want[0] == 'OK' and got[0] == 'REFUSED' and \
                    "element type '" in got[1]:
                # NumPy's other spellings of distconv's types ("1f4"): a
                # refusal naming the descr, never another array.
                descr = got[1].split("element type '", 1)[1].split("' (")[0]
                if descr not in SPELLINGS:
                    counts['numpy reads a spelling distconv refuses'] += 1
                    continue
            if want[0] == 'OK' and got[0] == 'REFUSED' and \
                    'a \\N{...} escape' in got[1]:
                # Python's \N{NAME} escape needs Unicode's name table.
                counts['numpy reads a \\N{...} escape distconv refuses'] += 1
                continue
            if want[0] != got[0] or (want[0] == 'OK' and
                                     (want[1], want[2]) != tuple(got[1:3])):
                failures += 1
                print(f'MISMATCH {name}: numpy {verdict!r} -> {want}, '
                      f'distconv {got}\n  header: {text!r}')
                continue
            if want[0] == 'OK':
                counts['both read'] += 1
            elif verdict is None:
                counts['both refuse'] += 1
            else:
                counts['numpy reads, distconv refuses as it must'] += 1
        print(f'{len(cases)} headers: ' +
              ', '.join(f'{k} {v}' for k, v in counts.items()) +
              f', mismatches {failures}')
        return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
