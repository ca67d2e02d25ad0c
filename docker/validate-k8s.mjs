// validates rendered Kubernetes manifests: each object against the API schema of its kind
// (kubernetes-models), then what this service needs from them (probes, resources, drain
// time, selectors). Those schemas do not reject unknown fields, so every field that
// matters is also asserted to be where it should be.
//   kubectl kustomize docker/k8s > rendered.yaml && node docker/validate-k8s.mjs rendered.yaml
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';

const MODELS = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/Service': Service,
};
const PART_OF = ['app.kubernetes.io/part-of', 'tensor-norm-service']; // kustomization.yaml's commonLabels
const SERVER_DRAIN_GRACE_S = 5; // src/server.ts: DRAIN_GRACE_MS beyond the longest deadline
const DEFAULT_TIMEOUT_MS = 30_000; // REQUEST_TIMEOUT_MS default (API.md §7, src/config.ts)

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

function load(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return doc.toJS();
  }).filter((obj) => obj !== null);
}

const key = (obj) => `${obj.apiVersion}/${obj.kind}`;
const matches = (selector = {}, labels = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

function checkSchema(obj) {
  const Model = MODELS[key(obj)];
  if (!Model) return check(false, `${key(obj)} ${obj.metadata?.name}: no schema for this kind`);
  try {
    new Model(obj).validate();
  } catch (err) {
    check(false, `${key(obj)} ${obj.metadata?.name}: ${err.message}`);
  }
}

function checkDeployment(dep) {
  const name = `Deployment ${dep.metadata.name}`;
  const pod = dep.spec.template.spec;
  check(matches(dep.spec.selector.matchLabels, dep.spec.template.metadata?.labels), `${name}: selector does not match the pod labels`);
  check(pod.securityContext?.runAsNonRoot === true, `${name}: securityContext.runAsNonRoot must be true`);
  for (const c of pod.containers) {
    const where = `${name} container ${c.name}`;
    const ports = new Set((c.ports ?? []).flatMap((p) => [p.name, p.containerPort]));
    check(c.livenessProbe?.httpGet?.path === '/healthz', `${where}: livenessProbe must GET /healthz`);
    check(c.readinessProbe?.httpGet?.path === '/readyz', `${where}: readinessProbe must GET /readyz`);
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
      const port = c[probe]?.httpGet?.port;
      check(port === undefined || ports.has(port), `${where}: ${probe} port ${port} is not a container port`);
    }
    for (const kind of ['requests', 'limits']) {
      for (const resource of ['cpu', 'memory']) {
        check(c.resources?.[kind]?.[resource] !== undefined, `${where}: resources.${kind}.${resource} is missing`);
      }
    }
    // API_KEYS_FILE names a file of a mounted Secret the server (uid 1000, fsGroup) can read
    const keysFile = c.env?.find((e) => e.name === 'API_KEYS_FILE')?.value;
    const mount = (c.volumeMounts ?? []).find((m) => keysFile?.startsWith(`${m.mountPath}/`));
    const volume = pod.volumes?.find((v) => v.name === mount?.name);
    check(volume?.secret?.secretName !== undefined, `${where}: API_KEYS_FILE (${keysFile}) is not in a mounted Secret`);
    const fsGroup = pod.securityContext?.fsGroup;
    check(fsGroup !== undefined && fsGroup === pod.securityContext?.runAsGroup, `${where}: fsGroup must be the server's group, or it cannot read the Secret`);
    check(((volume?.secret?.defaultMode ?? 0o644) & 0o040) !== 0, `${where}: the Secret's files must be readable by the group (defaultMode)`);
    check(c.securityContext?.readOnlyRootFilesystem === true, `${where}: readOnlyRootFilesystem must be true`);
    check(c.securityContext?.allowPrivilegeEscalation === false, `${where}: allowPrivilegeEscalation must be false`);
    // the pod must outlive the server's own drain: preStop pause + longest deadline + grace
    const timeoutMs = Number(c.env?.find((e) => e.name === 'REQUEST_TIMEOUT_MS')?.value ?? DEFAULT_TIMEOUT_MS);
    const preStop = c.lifecycle?.preStop?.exec?.command;
    const preStopS = preStop?.[0] === 'sleep' ? Number(preStop[1]) : 0;
    const drainS = preStopS + timeoutMs / 1000 + SERVER_DRAIN_GRACE_S;
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    check(grace > drainS, `${where}: terminationGracePeriodSeconds ${grace} must exceed the drain time ${drainS} s`);
  }
}

function checkRelations(objects) {
  const byKind = (kind) => objects.filter((o) => o.kind === kind);
  const deployments = byKind('Deployment');
  check(deployments.length === 1, `expected one Deployment, found ${deployments.length}`);
  check(byKind('Service').length === 1, 'expected one Service');
  check(byKind('HorizontalPodAutoscaler').length === 1, 'expected one HorizontalPodAutoscaler');
  const [dep] = deployments;
  if (!dep) return;
  const podLabels = dep.spec.template.metadata?.labels;
  const portNames = new Set(dep.spec.template.spec.containers.flatMap((c) => (c.ports ?? []).flatMap((p) => [p.name, p.containerPort])));
  for (const svc of byKind('Service')) {
    check(matches(svc.spec.selector, podLabels), `Service ${svc.metadata.name}: selector does not match the pods`);
    for (const p of svc.spec.ports) check(portNames.has(p.targetPort ?? p.port), `Service ${svc.metadata.name}: targetPort ${p.targetPort} is not a container port`);
    const grpc = svc.spec.ports.find((p) => p.name === 'grpc');
    check(grpc?.appProtocol === 'grpc' && grpc?.targetPort === 'grpc', `Service ${svc.metadata.name}: needs the gRPC port (targetPort grpc, appProtocol grpc)`);
  }
  for (const hpa of byKind('HorizontalPodAutoscaler')) {
    const ref = hpa.spec.scaleTargetRef;
    check(ref.kind === 'Deployment' && ref.name === dep.metadata.name && ref.apiVersion === 'apps/v1', `HPA ${hpa.metadata.name}: scaleTargetRef is not the Deployment`);
    check(hpa.spec.minReplicas >= 1 && hpa.spec.minReplicas <= hpa.spec.maxReplicas, `HPA ${hpa.metadata.name}: minReplicas/maxReplicas`);
    check((hpa.spec.metrics ?? []).length > 0, `HPA ${hpa.metadata.name}: no metrics`);
  }
  for (const pdb of byKind('PodDisruptionBudget')) {
    check(matches(pdb.spec.selector?.matchLabels, podLabels), `PDB ${pdb.metadata.name}: selector does not match the pods`);
  }
}

// the kustomization's label reached every object and the pods
function checkLabels(objects) {
  const [name, value] = PART_OF;
  for (const obj of objects) check(obj.metadata.labels?.[name] === value, `${key(obj)} ${obj.metadata.name}: no ${name} label`);
  for (const dep of objects.filter((o) => o.kind === 'Deployment')) {
    check(dep.spec.template.metadata?.labels?.[name] === value, `Deployment ${dep.metadata.name}: pods have no ${name} label`);
  }
}

const [file] = process.argv.slice(2);
const objects = load(file);
objects.forEach(checkSchema);
objects.filter((o) => o.kind === 'Deployment').forEach(checkDeployment);
checkRelations(objects);
checkLabels(objects);

if (failures.length > 0) {
  for (const f of failures) console.error(`k8s: ${f}`);
  process.exit(1);
}
console.log(`k8s: ${objects.length} objects valid (${objects.map((o) => o.kind).join(', ')})`);
