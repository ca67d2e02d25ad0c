// renders docker/k8s/kustomization.yaml like `kubectl kustomize`, for machines without
// kubectl. Only the fields that kustomization uses are supported; any other one is an
// error rather than silently ignored.
//   node docker/kustomize-lite.mjs docker/k8s > rendered.yaml
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'labels', 'images', 'namespace']);
// kinds whose spec.template is a pod template (kustomize's includeTemplates targets)
const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);
// kustomize's legacy output order: namespaces and config first, workloads after services
const ORDER = ['Namespace', 'ServiceAccount', 'ConfigMap', 'Secret', 'Service', 'Deployment', 'StatefulSet',
  'DaemonSet', 'Job', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'];

function readDocs(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return doc.toJS();
  }).filter((obj) => obj !== null);
}

function addLabels(obj, { pairs, includeSelectors = false, includeTemplates = false }) {
  obj.metadata.labels = { ...obj.metadata.labels, ...pairs };
  const template = WORKLOADS.has(obj.kind) ? obj.spec?.template : undefined;
  if (template && (includeTemplates || includeSelectors)) {
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...pairs } };
  }
  if (!includeSelectors) return;
  if (obj.kind === 'Service') obj.spec.selector = { ...obj.spec.selector, ...pairs };
  else if (obj.spec?.selector) obj.spec.selector.matchLabels = { ...obj.spec.selector.matchLabels, ...pairs };
}

/** "name[:tag][@digest]" → its name, as kustomize's images transformer matches it */
function imageName(image) {
  const noDigest = image.split('@')[0];
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

function setImages(obj, images) {
  const pod = WORKLOADS.has(obj.kind) ? obj.spec?.template?.spec : undefined;
  for (const container of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
    const rule = images.find((i) => i.name === imageName(container.image));
    if (!rule) continue;
    let image = rule.newName ?? imageName(container.image);
    if (rule.digest) image += `@${rule.digest}`;
    else if (rule.newTag) image += `:${rule.newTag}`;
    container.image = image;
  }
}

export function render(dir) {
  const [kustomization] = readDocs(join(dir, 'kustomization.yaml'));
  for (const key of Object.keys(kustomization)) {
    if (!SUPPORTED.has(key)) throw new Error(`kustomization.yaml: "${key}" is not supported by kustomize-lite`);
  }
  const objects = (kustomization.resources ?? []).flatMap((file) => readDocs(join(dir, file)));
  for (const obj of objects) {
    obj.metadata ??= {};
    if (kustomization.namespace) obj.metadata.namespace = kustomization.namespace;
    for (const label of kustomization.labels ?? []) addLabels(obj, label);
    setImages(obj, kustomization.images ?? []);
  }
  const rank = (obj) => (ORDER.includes(obj.kind) ? ORDER.indexOf(obj.kind) : ORDER.length);
  return objects.sort((a, b) => rank(a) - rank(b) || a.metadata.name.localeCompare(b.metadata.name));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2] ?? 'docker/k8s';
  process.stdout.write(render(dir).map((obj) => stringify(obj)).join('---\n'));
}
