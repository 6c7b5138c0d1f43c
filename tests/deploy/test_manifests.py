#!/usr/bin/env python3
"""Checks deploy/: the manifests parse, and hold what koord-bpf relies on.

    test_manifests.py [--koord-bpf BINARY] [--schemas NODE_MODULES]
        check deploy/koord-bpf.yaml, deploy/Dockerfile and the kustomize base; with BINARY also
        run `BINARY --check-config` on the ConfigMap's JSON, with NODE_MODULES (npm ci of
        tests/deploy/schemas) validate every object of the base against its OpenAPI schema

Every rule is also run against a broken copy of the manifests, which it must refuse, so a
checker that stopped checking would fail here.
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
DOCKERFILE = os.path.join(ROOT, 'deploy', 'Dockerfile')
# What the daemon needs, measured by dropping capabilities (docs/deploy.md).
ALLOWED_CAPS = {'BPF', 'PERFMON', 'KILL', 'SYS_RESOURCE'}
REQUIRED_CAPS = {'BPF', 'PERFMON'}
# Set in every container by the kubelet.
KUBELET_ENV = {'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'}
HOST_PATHS = {'/sys/fs/cgroup': False, '/sys/fs/bpf': False, '/sys/kernel/btf': True,
              '/var/lib/koord-bpf': False, '/var/lib/kubelet': True}   # path: mounted read-only


class Bad(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Bad(what)


def one(docs, kind):
    found = [d for d in docs if d.get('kind') == kind]
    need(len(found) == 1, 'want one %s, found %d' % (kind, len(found)))
    return found[0]


def check(docs):
    for d in docs:
        need(isinstance(d, dict) and d.get('apiVersion') and d.get('kind'), 'a document without apiVersion/kind')
        need(d.get('metadata', {}).get('name'), '%s without metadata.name' % d['kind'])
    ns = one(docs, 'Namespace')['metadata']['name']
    sa = one(docs, 'ServiceAccount')
    role = one(docs, 'ClusterRole')
    binding = one(docs, 'ClusterRoleBinding')
    cm = one(docs, 'ConfigMap')
    ds = one(docs, 'DaemonSet')
    for d in (sa, cm, ds):
        need(d['metadata'].get('namespace') == ns, '%s not in namespace %s' % (d['kind'], ns))
    need(ds['apiVersion'] == 'apps/v1', 'DaemonSet apiVersion')

    # RBAC: exactly a read of nodes/pods (the kubelet's /pods), bound to the pod's account;
    # never nodes/proxy, which also opens the kubelet's exec and run endpoints; the one write
    # is the Eviction API's create of pods/eviction
    need(any('' in r.get('apiGroups', []) and 'nodes/pods' in r.get('resources', []) and
             'get' in r.get('verbs', []) for r in role['rules']), 'ClusterRole lacks get nodes/pods')
    for r in role['rules']:
        writes = set(r.get('verbs', [])) - {'get', 'list', 'watch'}
        need(not writes or (writes == {'create'} and r.get('resources') == ['pods/eviction'] and
                            r.get('apiGroups') == ['']), 'ClusterRole grants writes: %s' % r)
        need('*' not in r.get('resources', []), 'ClusterRole grants every resource')
        need(not {'nodes/proxy', 'nodes/*'} & set(r.get('resources', [])),
             'ClusterRole grants nodes/proxy (exec into any pod): %s' % r)
    need(binding['roleRef'] == {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole',
                                'name': role['metadata']['name']}, 'binding does not name the role')
    need({'kind': 'ServiceAccount', 'name': sa['metadata']['name'], 'namespace': ns} in binding['subjects'],
         'binding does not name the service account')

    spec = ds['spec']
    tmpl = spec['template']
    pod = tmpl['spec']
    sel = spec['selector']['matchLabels']
    need(sel and all(tmpl['metadata'].get('labels', {}).get(k) == v for k, v in sel.items()),
         'selector does not match the template labels')
    need(pod.get('serviceAccountName') == sa['metadata']['name'], 'pod does not use the service account')
    need(pod.get('hostPID') is True, 'hostPID must be true (v1 eviction signals host pids)')
    need(not pod.get('hostNetwork'), 'hostNetwork is not needed')
    need(len(pod['containers']) == 1, 'one container')
    c = pod['containers'][0]

    # security: not privileged, only the capabilities named
    sc = c.get('securityContext', {})
    need(sc.get('privileged') is False, 'privileged must be false')
    need(sc.get('allowPrivilegeEscalation') is False, 'allowPrivilegeEscalation must be false')
    need(sc.get('readOnlyRootFilesystem') is True, 'readOnlyRootFilesystem must be true')
    caps = sc.get('capabilities', {})
    need(caps.get('drop') == ['ALL'], 'capabilities must drop ALL')
    add = set(caps.get('add', []))
    need(REQUIRED_CAPS <= add, 'capabilities lack %s' % sorted(REQUIRED_CAPS - add))
    need(add <= ALLOWED_CAPS, 'capabilities not needed: %s' % sorted(add - ALLOWED_CAPS))

    # host paths, each mounted where the daemon looks
    vols = {v['name']: v for v in pod['volumes']}
    mounts = {m['mountPath']: m for m in c['volumeMounts']}
    for path, ro in HOST_PATHS.items():
        m = mounts.get(path)
        need(m, 'nothing mounted at %s' % path)
        v = vols.get(m['name'], {})
        need(v.get('hostPath', {}).get('path') == path, '%s is not the host\'s %s' % (m['name'], path))
        need(bool(m.get('readOnly')) == ro, '%s must be mounted %s' % (path, 'read-only' if ro else 'writable'))

    # the config: the ConfigMap's key is the file --config names, and it agrees with the pod
    args = c.get('args', [])
    need('--config' in args, 'no --config argument')
    cfg_path = args[args.index('--config') + 1]
    cm_mount = [m for m in c['volumeMounts'] if vols.get(m['name'], {}).get('configMap', {}).get('name') ==
                cm['metadata']['name']]
    need(len(cm_mount) == 1, 'the ConfigMap is not mounted')
    key = os.path.relpath(cfg_path, cm_mount[0]['mountPath'])
    need(key in cm['data'], '--config %s is not a key of the ConfigMap' % cfg_path)
    cfg = json.loads(cm['data'][key])
    kb = cfg.get('koordBPF', {})
    host, _, port = kb.get('listen', '127.0.0.1:9326').rpartition(':')
    need(host in ('0.0.0.0', '[::]'), 'listen %s is not reachable from Prometheus' % kb.get('listen'))
    need(kb.get('stateDir', '/var/lib/koord-bpf') in mounts, 'stateDir is not a host path')
    # the kubelet replaces its checkpoint by a rename: a mounted file would keep the old one
    cms = kb.get('kubelet', {}).get('cpuManagerStateFile', '/var/lib/kubelet/cpu_manager_state')
    need(not cms or os.path.dirname(cms) in mounts,
         'cpuManagerStateFile %s is not in a mounted host directory' % cms)
    env = {e['name'] for e in c.get('env', [])}
    for var in re.findall(r'\$\{([^}]*)\}', kb.get('kubelet', {}).get('url', '')):
        need(var in env, 'kubelet url uses ${%s}, which the pod does not set' % var)
    need(pod.get('automountServiceAccountToken', True), 'the kubelet token is not mounted')
    # objects of the API server (the node's NodeSLO, its Node): each URL's variables are set and
    # the role reads them; since the cluster's NodeSLO decides enforcement, the shipped config
    # writes nothing (advise)
    for flag, group, resource in (('--nodeslo', 'slo.koordinator.sh', 'nodeslos'), ('--node', '', 'nodes')):
        if flag not in args:
            continue
        for var in re.findall(r'\$\{([^}]*)\}', args[args.index(flag) + 1]):
            need(var in env | KUBELET_ENV, '%s uses ${%s}, which the pod does not set' % (flag, var))
        need(any(group in r.get('apiGroups', []) and resource in r.get('resources', [])
                 and 'get' in r.get('verbs', []) for r in role['rules']),
             'ClusterRole lacks get %s (%s)' % (resource, flag))
    if '--nodeslo' in args:
        need(kb.get('mode') == 'advise',
             'koordBPF.mode is not advise: the cluster\'s NodeSLO would make it write beside koordlet')

    # Prometheus finds the port the daemon listens on; the probes ask /healthz there
    ann = tmpl['metadata'].get('annotations', {})
    need(ann.get('prometheus.io/scrape') == 'true', 'no prometheus.io/scrape annotation')
    need(ann.get('prometheus.io/port') == port, 'prometheus.io/port is not the listen port %s' % port)
    need(ann.get('prometheus.io/path', '/metrics') == '/metrics', 'prometheus.io/path')
    need(any(str(p['containerPort']) == port for p in c.get('ports', [])), 'containerPort is not %s' % port)
    # the probes ask /healthz on a listener of its own: clients holding the scraped port's
    # connections do not fail them
    _, _, hport = kb.get('healthListen', '').rpartition(':')
    need(hport and hport != port, 'healthListen %r is not a port apart from listen' % kb.get('healthListen'))
    by_name = {p.get('name'): str(p['containerPort']) for p in c.get('ports', [])}
    need(hport in by_name.values(), 'containerPort is not the health port %s' % hport)
    for probe in ('readinessProbe', 'livenessProbe'):
        get = c.get(probe, {}).get('httpGet', {})
        need(get.get('path') == '/healthz', '%s must ask /healthz' % probe)
        need(by_name.get(get.get('port'), str(get.get('port'))) == hport,
             '%s must use the health port %s' % (probe, hport))

    # a NetworkPolicy lets only chosen sources reach the pod, and only its metrics port
    pol = one(docs, 'NetworkPolicy')
    need(pol['metadata'].get('namespace') == ns, 'NetworkPolicy not in namespace %s' % ns)
    need(pol['spec'].get('podSelector', {}).get('matchLabels') == tmpl['metadata']['labels'],
         'NetworkPolicy does not select the pods')
    need('Ingress' in pol['spec'].get('policyTypes', []), 'NetworkPolicy does not restrict ingress')
    for rule in pol['spec'].get('ingress', []):
        need(rule.get('from'), 'an ingress rule open to every source: %s' % rule)
        need(rule.get('ports') and all(str(p.get('port')) == port for p in rule['ports']),
             'an ingress rule beyond the metrics port: %s' % rule)
    need(pod.get('terminationGracePeriodSeconds', 30) >= 10, 'too little time to restore the cgroups')
    return cm['data'][key]


def check_dockerfile(text, image):
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith('#')]
    froms = [l for l in lines if l.startswith('FROM ')]
    need(len(froms) >= 2, 'the Dockerfile must be multi-stage')
    need(' AS build' in froms[0], 'the first stage must be named build')
    need(any(l.startswith('COPY --from=build') for l in lines), 'the runtime copies nothing from build')
    need(any(l.startswith('ENTRYPOINT') and 'koord-bpf' in l for l in lines), 'no koord-bpf ENTRYPOINT')
    for l in lines:
        if l.startswith('COPY ') and '--from' not in l:
            src = l.split()[1]
            need(os.path.exists(os.path.join(ROOT, src)), 'COPY of a missing %s' % src)
    need(image.split(':')[0].endswith('koord-bpf'), 'the DaemonSet image is not koord-bpf')


def kustomize(directory):
    """The documents `kubectl kustomize DIR` builds (kubectl from scripts/deps.sh)."""
    out = subprocess.run(['kubectl', 'kustomize', directory], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    return list(yaml.safe_load_all(out))


def key(d):
    return (d['kind'], d['metadata'].get('namespace'), d['metadata']['name'])


def check_kustomize(built, files, dashboard):
    """The base holds every object of the files unchanged, and the dashboard for Grafana's sidecar."""
    by = {key(d): d for d in built}
    for d in files:
        need(key(d) in by, 'the kustomize base lacks %s %s' % (d['kind'], d['metadata']['name']))
        need(by[key(d)] == d, 'the kustomize base changes %s %s' % (d['kind'], d['metadata']['name']))
    cms = [d for d in built if d['kind'] == 'ConfigMap' and 'dashboard.json' in d.get('data', {})]
    need(len(cms) == 1, 'want one ConfigMap with dashboard.json, found %d' % len(cms))
    need(cms[0]['metadata'].get('labels', {}).get('grafana_dashboard') == '1',
         'the dashboard ConfigMap lacks the grafana_dashboard label')
    need(json.loads(cms[0]['data']['dashboard.json']) == dashboard, 'the dashboard differs')
    need(len(built) == len(files) + 1, 'the base holds %d objects, want %d' % (len(built), len(files) + 1))


def kustomize_refuses(files, dashboard):
    """A base that lost monitoring.yaml, or the label, fails the check."""
    for name, edit in (('monitoring.yaml left out', lambda k: k['resources'].remove('monitoring.yaml')),
                       ('no label', lambda k: k.pop('generatorOptions'))):
        with tempfile.TemporaryDirectory() as tmp:
            for f in os.listdir(os.path.join(ROOT, 'deploy')):
                if f.endswith(('.yaml', '.json')):
                    shutil.copy(os.path.join(ROOT, 'deploy', f), tmp)
            k = yaml.safe_load(open(os.path.join(tmp, 'kustomization.yaml')))
            edit(k)
            yaml.safe_dump(k, open(os.path.join(tmp, 'kustomization.yaml'), 'w'))
            try:
                check_kustomize(kustomize(tmp), files, dashboard)
            except Bad:
                continue
            raise Bad('the checker accepts a kustomize base with %s' % name)


VALIDATE = os.path.join(ROOT, 'tests', 'deploy', 'schemas', 'validate.js')


def validate(docs, node_modules):
    """validate.js's verdict per object: {'Kind/name': None when valid, else the reason}."""
    out = subprocess.run(['node', VALIDATE], input=json.dumps(docs), capture_output=True, text=True,
                         env=dict(os.environ, NODE_PATH=node_modules), timeout=120).stdout
    verdicts = {}
    for line in out.splitlines():
        bad = line.startswith('not ok ')
        name, _, why = line[len('not ok ' if bad else 'ok '):].partition(': ')
        verdicts[name] = why if bad else None
    need(len(verdicts) == len(docs), 'validate.js answered %d of %d objects: %s' % (len(verdicts), len(docs), out))
    return verdicts


def check_schemas(built, node_modules):
    bad = {k: v for k, v in validate(built, node_modules).items() if v is not None}
    need(not bad, 'objects that do not match their schema: %s' % bad)


def schemas_refuse(built, node_modules):
    """Each broken copy, one fault each, is refused by its schema."""
    def get(kind, name):
        d = copy.deepcopy(next(d for d in built if d['kind'] == kind))
        d['metadata']['name'] = name
        return d, d.get('spec', {})
    broken = []
    d, spec = get('DaemonSet', 'port-as-text')
    container(d)['ports'][0]['containerPort'] = 'x'
    broken.append(d)
    d, spec = get('DaemonSet', 'limit-not-a-quantity')
    container(d)['resources']['limits']['memory'] = '256 MB'
    broken.append(d)
    d, spec = get('DaemonSet', 'no-selector')
    spec.pop('selector')
    broken.append(d)
    d, spec = get('PrometheusRule', 'for-as-number')
    spec['groups'][0]['rules'][0]['for'] = 5
    broken.append(d)
    d, spec = get('PodMonitor', 'interval-in-words')
    spec['podMetricsEndpoints'][0]['interval'] = 'often'
    broken.append(d)
    d, _ = get('ClusterRole', 'verbs-as-text')
    d['rules'][0]['verbs'] = 'get'
    broken.append(d)
    d, spec = get('NetworkPolicy', 'protocol-as-number')
    spec['ingress'][0]['ports'][0]['protocol'] = 6
    broken.append(d)
    d, _ = get('DaemonSet', 'unknown-kind')
    d['kind'] = 'DaemonSett'
    broken.append(d)
    passed = [k for k, v in validate(broken, node_modules).items() if v is None]
    need(not passed, 'broken objects the schemas accept: %s' % passed)


def must_refuse(docs, name, mutate):
    broken = copy.deepcopy(docs)
    mutate(next(d for d in broken if d['kind'] == 'DaemonSet'), broken)
    try:
        check(broken)
    except (Bad, KeyError, ValueError):
        return
    raise Bad('the checker accepts a broken manifest: %s' % name)


def container(ds):
    return ds['spec']['template']['spec']['containers'][0]


def main():
    failed = 0
    binary = sys.argv[sys.argv.index('--koord-bpf') + 1] if '--koord-bpf' in sys.argv else None
    schemas = sys.argv[sys.argv.index('--schemas') + 1] if '--schemas' in sys.argv else None

    def step(name, fn):
        nonlocal failed
        try:
            fn()
            print('ok - %s' % name)
        except (Bad, KeyError, ValueError, OSError, yaml.YAMLError, subprocess.CalledProcessError) as e:
            print('not ok - %s: %s' % (name, e))
            failed += 1

    docs = []
    step('deploy/koord-bpf.yaml parses', lambda: docs.extend(yaml.safe_load_all(open(MANIFESTS))))
    cfg = []
    step('the manifests hold what koord-bpf relies on', lambda: cfg.append(check(docs)))
    step('the Dockerfile builds koord-bpf in stages', lambda: check_dockerfile(
        open(DOCKERFILE).read(), container(one(docs, 'DaemonSet'))['image']))
    if binary and cfg:
        def run():
            with tempfile.NamedTemporaryFile('w', suffix='.json') as f:
                f.write(cfg[0])
                f.flush()
                subprocess.run([binary, '--check-config', f.name], check=True, capture_output=True)
        step('koord-bpf --check-config accepts the ConfigMap', run)
    breakages = {
        'privileged': lambda ds, _: container(ds)['securityContext'].update(privileged=True),
        'SYS_ADMIN added': lambda ds, _: container(ds)['securityContext']['capabilities']['add'].append('SYS_ADMIN'),
        'BPF missing': lambda ds, _: container(ds)['securityContext']['capabilities']['add'].remove('BPF'),
        'no hostPID': lambda ds, _: ds['spec']['template']['spec'].pop('hostPID'),
        'btf unmounted': lambda ds, _: container(ds)['volumeMounts'].pop(
            [m['mountPath'] for m in container(ds)['volumeMounts']].index('/sys/kernel/btf')),
        'scrape port wrong': lambda ds, _: ds['spec']['template']['metadata']['annotations'].update(
            {'prometheus.io/port': '9999'}),
        'kubelet url variable unset': lambda ds, _: container(ds).update(env=[]),
        'config key wrong': lambda ds, _: container(ds).update(args=['--config', '/etc/koord-bpf/x.json']),
        'role grants writes': lambda _, docs: next(d for d in docs if d['kind'] == 'ClusterRole')[
            'rules'][0]['verbs'].append('patch'),
        'probes on the metrics port': lambda ds, _: container(ds)['livenessProbe']['httpGet'].update(
            port='metrics'),
        'no NetworkPolicy': lambda _, docs: docs.remove(next(d for d in docs if d['kind'] == 'NetworkPolicy')),
        'policy open to every source': lambda _, docs: next(d for d in docs if d['kind'] == 'NetworkPolicy')[
            'spec']['ingress'][0].pop('from'),
        'policy opens the health port': lambda _, docs: next(d for d in docs if d['kind'] == 'NetworkPolicy')[
            'spec']['ingress'][0]['ports'].append({'port': 9327}),
        'role grants create beyond pods/eviction': lambda _, docs: next(
            d for d in docs if d['kind'] == 'ClusterRole')['rules'][3]['resources'].append('pods'),
        'role grants delete of evictions': lambda _, docs: next(
            d for d in docs if d['kind'] == 'ClusterRole')['rules'][3]['verbs'].append('delete'),
        'role grants nodes/proxy': lambda _, docs: next(d for d in docs if d['kind'] == 'ClusterRole')[
            'rules'][0]['resources'].append('nodes/proxy'),
        'nodeslo url variable unset': lambda ds, _: container(ds).update(
            env=[e for e in container(ds)['env'] if e['name'] != 'NODE_NAME']),
        'role lacks nodeslos': lambda _, docs: next(d for d in docs if d['kind'] == 'ClusterRole')[
            'rules'].pop(2),
        'role lacks nodes': lambda _, docs: next(d for d in docs if d['kind'] == 'ClusterRole')[
            'rules'].pop(1),
        'enforcing beside koordlet': lambda _, docs: next(d for d in docs if d['kind'] == 'ConfigMap')[
            'data'].update({'koord-bpf.json': '{"koordBPF": {"listen": "0.0.0.0:9326", '
                            '"healthListen": "0.0.0.0:9327"}}'}),
        'binding names another account': lambda _, docs: next(
            d for d in docs if d['kind'] == 'ClusterRoleBinding')['subjects'][0].update(name='default'),
    }
    for name, mutate in breakages.items():
        step('refuses a manifest with %s' % name, lambda: must_refuse(docs, name, mutate))
    files = docs + list(yaml.safe_load_all(open(MONITORING)))
    dashboard = json.load(open(DASHBOARD))
    step('kubectl kustomize deploy/: both files and the dashboard, unchanged',
         lambda: check_kustomize(kustomize(os.path.join(ROOT, 'deploy')), files, dashboard))
    step('refuses a kustomize base that lost a file or the label',
         lambda: kustomize_refuses(files, dashboard))
    if schemas:
        built = []
        step('every object of the base matches its OpenAPI schema (kubernetes-models)',
             lambda: check_schemas(built.extend(kustomize(os.path.join(ROOT, 'deploy'))) or built, schemas))
        step('the schemas refuse 8 broken objects, one fault each', lambda: schemas_refuse(built, schemas))
    print('test_manifests: %d failed' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
