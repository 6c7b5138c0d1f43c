#!/usr/bin/env python3
"""Checks deploy/monitoring.yaml (PodMonitor, PrometheusRule) and deploy/dashboard.json.

    test_monitoring.py

- the PodMonitor selects the DaemonSet's pods and names a port its container has;
- the rules pass `promtool check rules`, and `promtool test rules` with series made here: each
  alert fires where it should and stays quiet where it should not;
- every dashboard query, its variables filled in, passes promtool's PromQL parser;
- every koord_bpf_ series the rules and the dashboard use is documented in docs/metrics.md.

Every rule is also run against a broken copy, which it must refuse, so a checker that stopped
checking would fail here. promtool comes with Debian's prometheus package.
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml  # Debian: python3-yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
MANIFESTS = os.path.join(ROOT, 'deploy', 'koord-bpf.yaml')
MONITORING = os.path.join(ROOT, 'deploy', 'monitoring.yaml')
DASHBOARD = os.path.join(ROOT, 'deploy', 'dashboard.json')
METRICS_DOC = os.path.join(ROOT, 'docs', 'metrics.md')
# Grafana's variables, as a query sees them once filled in
GRAFANA_VARS = {'$__rate_interval': '1m', '$__interval': '15s', '$node': '.*'}


class Bad(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Bad(what)


def promtool(*args):
    r = subprocess.run(['promtool'] + list(args), capture_output=True, text=True)
    need(r.returncode == 0, 'promtool %s: %s' % (args[0] + ' ' + args[1], (r.stdout + r.stderr).strip()))
    return r.stdout


def one(docs, kind):
    found = [d for d in docs if d and d.get('kind') == kind]
    need(len(found) == 1, 'want one %s, found %d' % (kind, len(found)))
    return found[0]


def documented():
    """Metric families named in docs/metrics.md's tables."""
    names = set()
    for line in open(METRICS_DOC):
        if line.startswith('|'):
            names.update(re.findall(r'`(koord_bpf_[a-z0-9_]+)`', line))
    return names


def used(expr):
    """koord_bpf_ families an expression reads (histogram series by their family)."""
    return {re.sub(r'_(bucket|count|sum)$', '', m) for m in re.findall(r'\bkoord_bpf_[a-z0-9_]+', expr)}


def check_podmonitor(mon, ds):
    pm = one(mon, 'PodMonitor')
    need(pm['apiVersion'] == 'monitoring.coreos.com/v1', 'PodMonitor apiVersion')
    need(pm['metadata'].get('namespace') == ds['metadata']['namespace'], 'PodMonitor not beside the DaemonSet')
    sel = pm['spec']['selector']['matchLabels']
    labels = ds['spec']['template']['metadata']['labels']
    need(sel and all(labels.get(k) == v for k, v in sel.items()), 'the PodMonitor selects no koord-bpf pod')
    ports = {p['name'] for c in ds['spec']['template']['spec']['containers'] for p in c.get('ports', [])}
    eps = pm['spec']['podMetricsEndpoints']
    need(eps and all(e.get('port') in ports for e in eps), 'a PodMonitor endpoint names no port of the pod')
    need(all(e.get('port') != 'health' for e in eps), 'the health port is not the metrics port')
    need(any(r.get('targetLabel') == 'node' for e in eps for r in e.get('relabelings', [])),
         'no node label: the dashboard and the alerts group by it')


def check_rules(mon, tmp, names):
    pr = one(mon, 'PrometheusRule')
    need(pr['apiVersion'] == 'monitoring.coreos.com/v1', 'PrometheusRule apiVersion')
    groups = pr['spec']['groups']
    rules = os.path.join(tmp, 'rules.yaml')
    with open(rules, 'w') as f:
        yaml.safe_dump({'groups': groups}, f)
    promtool('check', 'rules', rules)
    alerts = {r['alert']: r for g in groups for r in g['rules'] if 'alert' in r}
    for name, r in alerts.items():
        need(r.get('labels', {}).get('severity') in ('critical', 'warning', 'info'), '%s: no severity' % name)
        need(r.get('annotations', {}).get('summary') and r['annotations'].get('description'),
             '%s: no summary or description' % name)
        unknown = used(r['expr']) - names
        need(not unknown, '%s reads series docs/metrics.md does not define: %s' % (name, sorted(unknown)))
    need(set(RULE_TESTS) <= set(alerts), 'rules tested here are gone: %s' % sorted(set(RULE_TESTS) - set(alerts)))
    need(set(alerts) <= set(RULE_TESTS), 'alerts without a test here: %s' % sorted(set(alerts) - set(RULE_TESTS)))
    tests = os.path.join(tmp, 'rules_test.yaml')
    with open(tests, 'w') as f:
        yaml.safe_dump({'rule_files': ['rules.yaml'], 'evaluation_interval': '1m',
                        'tests': [t for name in alerts for t in RULE_TESTS[name]]}, f)
    promtool('test', 'rules', tests)


def check_dashboard(dash, tmp, names):
    need(dash.get('uid') and dash.get('title') and dash.get('schemaVersion', 0) >= 36, 'dashboard header')
    variables = {v['name']: v for v in dash['templating']['list']}
    need(variables.get('datasource', {}).get('type') == 'datasource', 'no datasource variable')
    need('node' in variables, 'no node variable')
    ids = [p['id'] for p in dash['panels']]
    need(len(ids) == len(set(ids)), 'panel ids repeat')
    exprs = [variables['node']['query']['query'].replace('label_values(', '').split(',')[0]]
    for p in dash['panels']:
        need(p.get('title') and p.get('gridPos') and p.get('targets'), 'panel %s incomplete' % p.get('id'))
        need(p['datasource'].get('uid') == '${datasource}', 'panel %s not on the datasource variable' % p['id'])
        refs = [t['refId'] for t in p['targets']]
        need(len(refs) == len(set(refs)), 'panel %s: refIds repeat' % p['id'])
        exprs += [t['expr'] for t in p['targets']]
    record = []
    for i, e in enumerate(exprs):
        for var, val in GRAFANA_VARS.items():
            e = e.replace(var, val)
        need('$' not in e, 'a variable this check does not fill in: %s' % e)
        unknown = used(e) - names
        need(not unknown, 'the dashboard reads series docs/metrics.md does not define: %s' % sorted(unknown))
        record.append({'record': 'dashboard:query_%d' % i, 'expr': e})
    path = os.path.join(tmp, 'dashboard_rules.yaml')
    with open(path, 'w') as f:
        yaml.safe_dump({'groups': [{'name': 'dashboard', 'rules': record}]}, f)
    promtool('check', 'rules', path)


def series(name, labels, values):
    return {'series': '%s{%s}' % (name, ','.join('%s="%s"' % kv for kv in sorted(labels.items()))),
            'values': values}


def wait_tests():
    """A p99.9 over 4 ms fires after 10 minutes; the same waits under 1 us, or too few, do not."""
    base = {'node': 'n1', 'namespace': 'default', 'pod': 'web', 'container': 'app', 'cgroup': '/w',
            'qos': 'LS'}
    calm = dict(base, pod='calm', cgroup='/c')
    rare = dict(base, pod='rare', cgroup='/r')
    buckets = ['0.000001023', '0.004194303', '0.008388607', '+Inf']
    s = []
    for le, slow, fast in zip(buckets, (0, 990, 1000, 1000), (1000, 1000, 1000, 1000)):
        # per minute: 1000 waits; web: 1% between 4.2 and 8.4 ms; calm: all under 1 us
        s.append(series('koord_bpf_runqueue_wait_seconds_bucket', dict(base, le=le), '0+%dx30' % slow))
        s.append(series('koord_bpf_runqueue_wait_seconds_bucket', dict(calm, le=le), '0+%dx30' % fast))
        # rare: the slow shape, but 10 waits a minute
        s.append(series('koord_bpf_runqueue_wait_seconds_bucket', dict(rare, le=le), '0+%dx30' % (slow // 100)))
    for lab in (base, calm):
        s.append(series('koord_bpf_runqueue_wait_seconds_count', lab, '0+1000x30'))
    s.append(series('koord_bpf_runqueue_wait_seconds_count', rare, '0+10x30'))
    labels = {k: v for k, v in base.items() if k != 'qos'}
    return [{'interval': '1m', 'input_series': s, 'alert_rule_test': [
        {'eval_time': '8m', 'alertname': 'KoordBPFOnlineWaitOverSLO', 'exp_alerts': []},
        {'eval_time': '20m', 'alertname': 'KoordBPFOnlineWaitOverSLO', 'exp_alerts': [
            {'exp_labels': dict(labels, severity='warning'), 'exp_annotations': {
                'summary': 'Online container default/web waits for a CPU: p99.9 7.969ms',
                'description': 'Its p99.9 run-queue wait on n1 has been over 4 ms for 10 minutes. '
                'koord_bpf_steal_seconds_total{from=...} says behind which class; '
                'koord_bpf_inflicted_wait_seconds_total{victims="online"} which container holds it.'}}]}]}]


def plain_tests(alert, name, labels, severity, quiet, loud, summary, description, at='20m'):
    """@alert over the series @name: silent with the values @quiet, firing with @loud (and
    its annotations rendered as @summary and @description)."""
    return [{'interval': '1m', 'input_series': [series(name, labels, quiet)], 'alert_rule_test': [
                {'eval_time': at, 'alertname': alert, 'exp_alerts': []}]},
            {'interval': '1m', 'input_series': [series(name, labels, loud)], 'alert_rule_test': [
                {'eval_time': at, 'alertname': alert, 'exp_alerts': [
                    {'exp_labels': dict(labels, severity=severity),
                     'exp_annotations': {'summary': summary, 'description': description}}]}]}]


RULE_TESTS = {
    'KoordBPFOnlineWaitOverSLO': wait_tests(),
    # down for 5 minutes is not 10
    'KoordBPFKubeletUnreachable': plain_tests(
        'KoordBPFKubeletUnreachable', 'koord_bpf_kubelet_up', {'node': 'n1'}, 'warning',
        '1x14 0x5', '1x5 0x15', "koord-bpf on n1 cannot read the kubelet's pods",
        'Classes come from the cgroups alone and no pod may be evicted until the kubelet answers '
        '(koord_bpf_kubelet_polls_total{result="error"}; the daemon\'s /healthz says why).'),
    'KoordBPFContainerSlotsFull': plain_tests(
        'KoordBPFContainerSlotsFull', 'koord_bpf_collector_events_total',
        {'node': 'n1', 'kind': 'container_slots_full'}, 'warning', '3x20', '3x15 4x5',
        'koord-bpf on n1 has more containers than slots',
        'Containers that found no slot are not measured: raise --max-containers (docs/performance.md).'),
    # two rollbacks in an hour are the loop at work; three are a pattern
    'KoordBPFActionsRolledBack': plain_tests(
        'KoordBPFActionsRolledBack', 'koord_bpf_rollbacks_total', {'node': 'n1'}, 'info',
        '0x10 2x10', '0x10 1 2 3 3 3 3 3 3 3 3', 'koord-bpf on n1 rolled back 3 actions in an hour',
        "Its actions made the online waits worse and were undone (the daemon's log and /api/containers "
        "give each verdict's numbers). The node's BE work may need another policy."),
    'KoordBPFTransitionStalls': plain_tests(
        'KoordBPFTransitionStalls', 'koord_bpf_transition_stalls_total', {'node': 'n1'}, 'info',
        '5x20', '5x15 6x5',
        'An online task waited 10 ms or more right after a write of koord-bpf on n1',
        'A cgroup write (an action or a rollback) was followed by an online wait of 10 ms or more where '
        'the windows before had none (docs/enforcement.md).'),
}


def main():
    failed = 0

    def step(name, fn):
        nonlocal failed
        try:
            fn()
            print('ok - %s' % name)
        except (Bad, KeyError, ValueError, TypeError, yaml.YAMLError) as e:
            print('not ok - %s: %s' % (name, e))
            failed += 1

    with open(MANIFESTS) as f:
        ds = one(list(yaml.safe_load_all(f)), 'DaemonSet')
    with open(MONITORING) as f:
        mon = [d for d in yaml.safe_load_all(f) if d]
    with open(DASHBOARD) as f:
        dash = json.load(f)
    names = documented()
    need(len(names) > 40, 'docs/metrics.md lists only %d families' % len(names))
    tmp = tempfile.mkdtemp(prefix='koord-monitoring-')

    step('the PodMonitor scrapes the DaemonSet\'s metrics port, with a node label',
         lambda: check_podmonitor(mon, ds))
    step('the rules pass promtool, and each alert fires (and stays quiet) as its test says',
         lambda: check_rules(mon, tmp, names))
    step('every dashboard query parses, on documented series', lambda: check_dashboard(dash, tmp, names))

    def refuses(name, fn):
        try:
            fn()
        except (Bad, KeyError, ValueError, TypeError):
            return
        raise Bad('the checker accepts a broken copy: %s' % name)

    def rule(m):
        return one(m, 'PrometheusRule')['spec']['groups'][0]['rules']

    def broken_mon(mutate):
        m = copy.deepcopy(mon)
        mutate(m)
        return m

    def broken_dash(mutate):
        d = copy.deepcopy(dash)
        mutate(d)
        return d

    breakages = {
        'a PodMonitor on another port': lambda: check_podmonitor(broken_mon(
            lambda m: one(m, 'PodMonitor')['spec']['podMetricsEndpoints'][0].update(port='web')), ds),
        'a PodMonitor selecting other pods': lambda: check_podmonitor(broken_mon(
            lambda m: one(m, 'PodMonitor')['spec']['selector']['matchLabels'].update(app='x')), ds),
        'a rule that does not parse': lambda: check_rules(broken_mon(
            lambda m: rule(m)[1].update(expr='koord_bpf_kubelet_up ==')), tmp, names),
        'an alert that no longer fires': lambda: check_rules(broken_mon(
            lambda m: rule(m)[0].update(expr=rule(m)[0]['expr'].replace('0.004', '0.009'))), tmp, names),
        'an alert that fires at once': lambda: check_rules(broken_mon(
            lambda m: rule(m)[1].pop('for')), tmp, names),
        'the tail alert without its floor of waits': lambda: check_rules(broken_mon(
            lambda m: rule(m)[0].update(expr=rule(m)[0]['expr'].split('\nand\n')[0])), tmp, names),
        'an alert on an undocumented series': lambda: check_rules(broken_mon(
            lambda m: rule(m)[1].update(expr='koord_bpf_kubelet_ok == 0')), tmp, names),
        'a dashboard query that does not parse': lambda: check_dashboard(broken_dash(
            lambda d: d['panels'][0]['targets'][0].update(expr='rate(koord_bpf_cpu_seconds_total[')), tmp, names),
        'a dashboard query on an undocumented series': lambda: check_dashboard(broken_dash(
            lambda d: d['panels'][1]['targets'][0].update(expr='koord_bpf_wait_max')), tmp, names),
    }
    for name, fn in breakages.items():
        step('refuses %s' % name, lambda: refuses(name, fn))
    print('test_monitoring: %d failed' % failed)
    if failed:
        print('# promtool inputs kept in %s' % tmp)
        return 1
    shutil.rmtree(tmp)
    return 0


if __name__ == '__main__':
    sys.exit(main())
