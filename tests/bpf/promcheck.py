#!/usr/bin/env python3
"""Strict checker of the Prometheus text exposition format 0.0.4.

    promcheck.py [--prefix P] [--monotonic] FILE...   check each scrape; with
        --monotonic also that counters never go down from one FILE to the next
    promcheck.py --selftest                             the checker rejects bad input

Rules checked (from the format's description, plus the naming conventions):
- every line is a comment (# HELP / # TYPE / other), or a sample
  `name{label="value",...} value [timestamp]`; the text ends with a newline;
  no blank lines
- metric and label names match their grammar; label names do not start with
  "__"; no label twice in a series; label values use only the escapes \\\\ \\" \\n
- HELP and TYPE at most once per family, both before the family's first
  sample; a family's lines form one group; TYPE is a known type; every
  sample belongs to a family with a TYPE
- no duplicate series (name and label set)
- values are floats (NaN, +Inf, -Inf allowed); counters and histogram
  parts are not negative and not NaN
- counters end in _total; names use base units (no _ms, _us, _ns,
  _milliseconds, _microseconds, _nanoseconds, _bytes is fine)
- histograms: every label set has _bucket series with le ascending, counts
  cumulative (non-decreasing), a +Inf bucket equal to _count, and _sum and
  _count; le is a float
- --prefix: every family starts with it
"""
import math
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*')
TYPES = {'counter', 'gauge', 'histogram', 'summary', 'untyped'}
BAD_UNITS = re.compile(r'_(ms|us|ns|milliseconds|microseconds|nanoseconds|kb|mb|gb|kib|mib|percent)(_total)?$')


class Bad(Exception):
    pass


def parse_float(s, what):
    if s in ('+Inf', 'Inf', '+inf', 'inf'):
        return math.inf
    if s in ('-Inf', '-inf'):
        return -math.inf
    if s in ('NaN', 'nan'):
        return math.nan
    if not re.fullmatch(r'[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?', s):
        raise Bad('bad %s %r' % (what, s))
    return float(s)


def parse_labels(s, i, lineno):
    """Parse from s[i] == '{' to the matching '}'; returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i:i + 1] == '}':
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            raise Bad('line %d: bad label name at %r' % (lineno, s[i:i + 20]))
        name = m.group(0)
        if name.startswith('__'):
            raise Bad('line %d: reserved label name %r' % (lineno, name))
        i = m.end()
        if s[i:i + 2] != '="':
            raise Bad('line %d: want =" after label %r' % (lineno, name))
        i += 2
        val = []
        while True:
            if i >= len(s):
                raise Bad('line %d: unterminated label value of %r' % (lineno, name))
            c = s[i]
            if c == '\\':
                e = s[i + 1:i + 2]
                if e == '\\':
                    val.append('\\')
                elif e == '"':
                    val.append('"')
                elif e == 'n':
                    val.append('\n')
                else:
                    raise Bad('line %d: bad escape \\%s in label %r' % (lineno, e, name))
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                val.append(c)
                i += 1
        if name in labels:
            raise Bad('line %d: label %r twice' % (lineno, name))
        labels[name] = ''.join(val)
        if s[i:i + 1] == ',':
            i += 1
            if s[i:i + 1] == '}':   # a trailing comma is allowed by the format
                return labels, i + 1
        elif s[i:i + 1] != '}':
            raise Bad('line %d: want , or } after label %r' % (lineno, name))


def family_of(name, types):
    """The family a sample name belongs to (histogram/summary suffixes)."""
    if name in types:
        return name
    for suf in ('_bucket', '_sum', '_count'):
        if name.endswith(suf):
            base = name[:-len(suf)]
            if types.get(base) in ('histogram', 'summary') and (suf != '_bucket' or types[base] == 'histogram'):
                return base
    return name


def check(text, prefix=None):
    """Check one scrape; returns {(name, frozenset(labels)): value} and the families' types."""
    if not text.endswith('\n'):
        raise Bad('the text does not end with a newline')
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        raise Bad('not UTF-8')
    types, helps, seen_family_done, samples, has_samples = {}, set(), set(), {}, set()
    order = []
    current = None
    for lineno, line in enumerate(text[:-1].split('\n'), 1):
        if line == '':
            raise Bad('line %d: blank line' % lineno)
        if line.startswith('#'):
            parts = line.split(' ', 3)
            if len(parts) >= 3 and parts[1] in ('HELP', 'TYPE'):
                kind, name = parts[1], parts[2]
                if not NAME.fullmatch(name):
                    raise Bad('line %d: bad metric name %r' % (lineno, name))
                if name in seen_family_done:
                    raise Bad('line %d: %s for %s after its samples or twice' % (lineno, kind, name))
                if kind == 'HELP':
                    if name in helps:
                        raise Bad('line %d: second HELP for %s' % (lineno, name))
                    doc = parts[3] if len(parts) > 3 else ''
                    if re.search(r'\\[^\\n]', doc.replace('\\\\', '')):
                        raise Bad('line %d: bad escape in HELP of %s' % (lineno, name))
                    if name in has_samples:
                        raise Bad('line %d: HELP for %s after its samples' % (lineno, name))
                    helps.add(name)
                else:
                    if name in types:
                        raise Bad('line %d: second TYPE for %s' % (lineno, name))
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise Bad('line %d: bad TYPE line' % lineno)
                    if name in has_samples:
                        raise Bad('line %d: TYPE for %s after its samples' % (lineno, name))
                    types[name] = parts[3]
                if current != name:
                    if current is not None:
                        seen_family_done.add(current)
                    current = name
            continue
        m = NAME.match(line)
        if not m:
            raise Bad('line %d: bad metric name in %r' % (lineno, line[:60]))
        name = m.group(0)
        i = m.end()
        labels = {}
        if line[i:i + 1] == '{':
            labels, i = parse_labels(line, i, lineno)
        rest = line[i:]
        if not rest.startswith(' '):
            raise Bad('line %d: want a space before the value' % lineno)
        fields = rest[1:].split(' ')
        if len(fields) not in (1, 2):
            raise Bad('line %d: want value [timestamp], got %r' % (lineno, rest))
        value = parse_float(fields[0], 'value')
        if len(fields) == 2 and not re.fullmatch(r'-?\d+', fields[1]):
            raise Bad('line %d: bad timestamp %r' % (lineno, fields[1]))
        fam = family_of(name, types)
        if fam not in types:
            raise Bad('line %d: sample %s without a TYPE' % (lineno, name))
        if fam in seen_family_done or (current != fam):
            raise Bad('line %d: %s is not in one group with its family %s' % (lineno, name, fam))
        key = (name, frozenset(labels.items()))
        if key in samples:
            raise Bad('line %d: duplicate series %s%s' % (lineno, name, sorted(labels.items())))
        samples[key] = value
        has_samples.add(fam)
        order.append((fam, key))
        t = types[fam]
        if t in ('counter', 'histogram') and (math.isnan(value) or value < 0):
            raise Bad('line %d: %s %s is %s' % (lineno, t, name, fields[0]))
        if t == 'histogram' and name.endswith('_bucket'):
            if 'le' not in labels:
                raise Bad('line %d: bucket without le' % lineno)
            parse_float(labels['le'], 'le')
    for fam, t in types.items():
        if prefix and not fam.startswith(prefix):
            raise Bad('%s lacks the prefix %s' % (fam, prefix))
        if t == 'counter' and not fam.endswith('_total'):
            raise Bad('counter %s does not end in _total' % fam)
        if t != 'counter' and fam.endswith('_total'):
            raise Bad('%s %s ends in _total' % (t, fam))
        if BAD_UNITS.search(fam):
            raise Bad('%s is not in base units' % fam)
    check_histograms(types, order, samples)
    return samples, types


def check_histograms(types, order, samples):
    for fam, t in types.items():
        if t != 'histogram':
            continue
        groups = {}
        for f, key in order:     # in text order
            if f != fam:
                continue
            name, labels = key
            d = dict(labels)
            le = d.pop('le', None)
            g = groups.setdefault(frozenset(d.items()), {'buckets': [], 'sum': None, 'count': None})
            if name == fam + '_bucket':
                g['buckets'].append((parse_float(le, 'le'), samples[key]))
            elif name == fam + '_sum':
                g['sum'] = samples[key]
            elif name == fam + '_count':
                g['count'] = samples[key]
            else:
                raise Bad('%s: unexpected series %s' % (fam, name))
        for labels, g in groups.items():
            where = '%s%s' % (fam, sorted(labels))
            b = g['buckets']
            if not b:
                raise Bad('%s: no buckets' % where)
            if g['sum'] is None or g['count'] is None:
                raise Bad('%s: _sum or _count missing' % where)
            for (le0, c0), (le1, c1) in zip(b, b[1:]):
                if not le1 > le0:
                    raise Bad('%s: le not ascending (%g then %g)' % (where, le0, le1))
                if c1 < c0:
                    raise Bad('%s: buckets not cumulative (le=%g: %g, le=%g: %g)' % (where, le0, c0, le1, c1))
            if b[-1][0] != math.inf:
                raise Bad('%s: no +Inf bucket' % where)
            if b[-1][1] != g['count']:
                raise Bad('%s: +Inf bucket %g != _count %g' % (where, b[-1][1], g['count']))


def monotonic(prev, cur, types):
    """Counters (and histogram parts) present in both scrapes never go down."""
    n = 0
    for key, v in cur.items():
        name = key[0]
        fam = family_of(name, types)
        if types.get(fam) not in ('counter', 'histogram') or key not in prev:
            continue
        n += 1
        if v < prev[key]:
            raise Bad('counter went down: %s%s %g -> %g' % (name, sorted(key[1]), prev[key], v))
    return n


SELFTEST_BAD = {
    'no newline at end': '# TYPE a_total counter\na_total 1',
    'sample without TYPE': 'a 1\n',
    'bad metric name': '# TYPE 1a gauge\n1a 1\n',
    'bad label name': '# TYPE a gauge\na{1x="y"} 1\n',
    'reserved label': '# TYPE a gauge\na{__x="y"} 1\n',
    'unescaped quote': '# TYPE a gauge\na{x="a"b"} 1\n',
    'bad escape': '# TYPE a gauge\na{x="a\\tb"} 1\n',
    'raw newline in value': '# TYPE a gauge\na{x="a\nb"} 1\n',
    'duplicate series': '# TYPE a gauge\na{x="1",y="2"} 1\na{y="2",x="1"} 2\n',
    'duplicate label': '# TYPE a gauge\na{x="1",x="2"} 1\n',
    'TYPE after samples': '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n',
    'HELP after samples': '# TYPE a gauge\na 1\n# HELP a x\n',
    'HELP twice': '# HELP a x\n# HELP a y\n# TYPE a gauge\na 1\n',
    'split group': '# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x="1"} 2\n',
    'bad value': '# TYPE a gauge\na 1,5\n',
    'counter without _total': '# TYPE a counter\na 1\n',
    'negative counter': '# TYPE a_total counter\na_total -1\n',
    'not base units': '# TYPE a_ms gauge\na_ms 1\n',
    'blank line': '# TYPE a gauge\n\na 1\n',
    'prefix': '# TYPE other gauge\nother 1\n',
    'histogram not cumulative':
        '# TYPE h histogram\nh_bucket{le="1"} 5\nh_bucket{le="2"} 4\nh_bucket{le="+Inf"} 5\nh_sum 1\nh_count 5\n',
    'histogram le not ascending':
        '# TYPE h histogram\nh_bucket{le="2"} 1\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    'histogram without +Inf':
        '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
    '+Inf != _count':
        '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
    'histogram without _count':
        '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\n',
    'bucket without le': '# TYPE h histogram\nh_bucket 1\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
}
SELFTEST_GOOD = (
    '# HELP a_total A counter with \\\\ and \\n in its help.\n# TYPE a_total counter\n'
    'a_total{path="/x\\"y\\\\z\\nw",q=""} 1.5e3\na_total{path="/"} 0\n'
    '# TYPE h_seconds histogram\nh_seconds_bucket{x="1",le="0.5"} 1\nh_seconds_bucket{x="1",le="+Inf"} 2\n'
    'h_seconds_sum{x="1"} 0.7\nh_seconds_count{x="1"} 2\n# a comment\n# TYPE g gauge\ng NaN\ng{a="b"} -Inf 1700000000000\n'
)


def selftest():
    fails = 0
    for what, text in SELFTEST_BAD.items():
        try:
            check(text, prefix='a' if what == 'prefix' else None)
            print('not ok - accepted: %s' % what)
            fails += 1
        except Bad:
            pass
    try:
        s, _ = check(SELFTEST_GOOD)
        assert s[('a_total', frozenset({'path': '/x"y\\z\nw', 'q': ''}.items()))] == 1500
    except (Bad, AssertionError, KeyError) as e:
        print('not ok - rejected good input: %s' % e)
        fails += 1
    try:
        p, t = check('# TYPE a_total counter\na_total 2\n')
        c, _ = check('# TYPE a_total counter\na_total 1\n')
        monotonic(p, c, t)
        print('not ok - a counter going down passed')
        fails += 1
    except Bad:
        pass
    print('promcheck selftest: %d bad inputs rejected, %d failures' % (len(SELFTEST_BAD), fails))
    return fails == 0


def main(argv):
    prefix, mono, files = None, False, []
    it = iter(argv)
    for a in it:
        if a == '--selftest':
            return 0 if selftest() else 1
        if a == '--prefix':
            prefix = next(it)
        elif a == '--monotonic':
            mono = True
        else:
            files.append(a)
    if not files:
        print(__doc__)
        return 2
    prev = None
    for f in files:
        with open(f, encoding='utf-8', errors='strict') as fh:
            text = fh.read()
        try:
            samples, types = check(text, prefix)
            if mono and prev is not None:
                n = monotonic(prev, samples, types)
                print('%s: %d series, %d families; %d counters monotonic' % (f, len(samples), len(types), n))
            else:
                print('%s: %d series, %d families' % (f, len(samples), len(types)))
        except Bad as e:
            print('%s: %s' % (f, e))
            return 1
        prev = samples
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
