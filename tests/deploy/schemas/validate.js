'use strict';
// Validates Kubernetes objects (a JSON array on stdin) against the OpenAPI schemas of
// kubernetes-models and of the Prometheus Operator's CRDs: one line per object, exit 1 on any error.
const path = require('path');

const groups = {
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator/monitoring.coreos.com',
};

function modelOf(apiVersion, kind) {
  const slash = apiVersion.lastIndexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const base = groups[group] || (group ? 'kubernetes-models/' + group : 'kubernetes-models');
  const mod = require(base + '/' + version + '/' + kind);   // throws: a kind without a schema
  return mod[kind];
}

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  let failed = 0;
  for (const doc of JSON.parse(input)) {
    const name = doc.kind + '/' + (doc.metadata || {}).name;
    try {
      const Model = modelOf(doc.apiVersion, doc.kind);
      new Model(doc).validate();
      console.log('ok ' + name);
    } catch (e) {
      console.log('not ok ' + name + ': ' + String(e.message || e).split('\n').slice(0, 6).join(' | '));
      failed++;
    }
  }
  process.exit(failed ? 1 : 0);
});
