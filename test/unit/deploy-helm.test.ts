import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DaemonConfigSchema } from '../../src/config/schema.js';

/**
 * deploy/helm/switchboard (issue #28, item 5). Helm is no Debian or npm package here, so neither
 * `helm lint` nor `helm template` can run in CI. Instead each template is read as Helm would
 * leave it for the default values where that is simple: a `{{ .Values.path }}` becomes the value
 * of values.yaml, any other action a placeholder, and lines holding only actions disappear. What
 * is left must be YAML, and the facts that matter are checked on it; the template language
 * itself is checked for balanced blocks, known includes and `.Values` paths that exist.
 */

const chartDir = new URL('../../deploy/helm/switchboard/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, chartDir), 'utf8');
const values = parse(read('values.yaml')) as Record<string, unknown>;
const chart = parse(read('Chart.yaml')) as Record<string, unknown>;
const templateNames = readdirSync(new URL('templates/', chartDir)).sort();
const templates = new Map(templateNames.map((name) => [name, read(`templates/${name}`)]));

const PLACEHOLDER = 'TEMPLATED';

function valueAt(path: string): unknown {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The template with simple `.Values` references filled in and every other action made inert. */
function skeleton(text: string): unknown {
  const lines = text
    .replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '')
    .split('\n')
    .filter((line) => !/^\s*(\{\{-?[^}]*-?\}\}\s*)+$/.test(line));
  const filled = lines
    .join('\n')
    .replace(/\{\{-?\s*\.Values\.([\w.]+)(\s*\|\s*quote)?\s*-?\}\}/g, (_match, path: string, quote?: string) => {
      const value = valueAt(path);
      if (value === undefined) throw new Error(`.Values.${path} is not in values.yaml`);
      return quote ? JSON.stringify(String(value)) : String(value);
    })
    .replace(/\{\{[^}]*\}\}/g, PLACEHOLDER);
  return parse(filled);
}

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const doc = (name: string): Doc => skeleton(templates.get(name) as string) as Doc;

describe('Helm chart deploy/helm/switchboard', () => {
  it('is a v2 application chart whose appVersion is the daemon version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'switchboard', type: 'application', appVersion: pkg.version });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(templateNames).toEqual(
      expect.arrayContaining(['_helpers.tpl', 'NOTES.txt', 'configmap.yaml', 'deployment.yaml', 'hpa.yaml', 'pdb.yaml', 'secret.yaml', 'service.yaml']),
    );
  });

  it('writes template actions that close, include what is defined, and read only values that exist', () => {
    const defined = new Set([...(templates.get('_helpers.tpl') as string).matchAll(/define "([^"]+)"/g)].map((m) => m[1]));
    for (const [name, text] of templates) {
      const opened = [...text.matchAll(/\{\{-?\s*(if|with|range|define)\b/g)].length;
      const closed = [...text.matchAll(/\{\{-?\s*end\b/g)].length;
      expect(closed, `${name}: blocks opened vs closed`).toBe(opened);
      for (const [, include] of text.matchAll(/include "([^"]+)"/g)) expect(defined, `${name} includes ${include}`).toContain(include);
      for (const [, path] of text.matchAll(/\.Values\.([\w.]+)/g)) expect(valueAt(path as string), `${name}: .Values.${path}`).not.toBeUndefined();
    }
  });

  it('runs 2 replicas by default, probes /ready and /health, binds 0.0.0.0 and takes the token and database from the Secret', () => {
    expect(values.replicaCount).toBe(2);
    const deployment = doc('deployment.yaml');
    expect(deployment).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 2 } });
    // The HPA owns the replica count when it is on.
    expect(templates.get('deployment.yaml')).toMatch(/\{\{- if not \.Values\.autoscaling\.enabled \}\}\n\s*replicas: \{\{ \.Values\.replicaCount \}\}\n\s*\{\{- end \}\}/);

    const [container] = deployment.spec.template.spec.containers as Doc[];
    expect(container!.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    const readiness = (container!.readinessProbe.exec.command as string[]).join(' ');
    expect(readiness).toContain("'/ready'");
    expect(readiness).toContain("authorization: 'Bearer ' + process.env.SWITCHBOARD_TOKEN");
    expect(container!.ports).toEqual([{ name: 'http', containerPort: 7337, protocol: 'TCP' }]);

    const env = new Map((container!.env as Doc[]).map((entry) => [entry.name as string, entry]));
    expect(env.get('SWITCHBOARD_HOST')?.value).toBe('0.0.0.0');
    expect(env.get('SWITCHBOARD_CONFIG')?.value).toBe('/etc/switchboard/config.json');
    expect(env.get('SWITCHBOARD_TOKEN')?.valueFrom.secretKeyRef.key).toBe('token');
    expect(env.get('SWITCHBOARD_DATABASE_URL')?.valueFrom.secretKeyRef.key).toBe('databaseUrl');
    expect(container!.volumeMounts).toEqual(expect.arrayContaining([{ name: 'config', mountPath: '/etc/switchboard', readOnly: true }]));
    // Read-only root: everything the daemon and npx write has a volume.
    expect(values.securityContext).toMatchObject({ readOnlyRootFilesystem: true });
    expect((container!.volumeMounts as Doc[]).map((m) => m.mountPath)).toEqual(expect.arrayContaining(['/data', '/home/node', '/tmp']));
    expect(values.terminationGracePeriodSeconds).toBeGreaterThan(10);
  });

  it('has a Service on the container port, a ConfigMap with the config file, and a Secret with both keys', () => {
    expect(doc('service.yaml')).toMatchObject({ kind: 'Service', spec: { ports: [{ name: 'http', port: 7337, targetPort: 'http' }] } });
    expect(doc('configmap.yaml')).toMatchObject({ kind: 'ConfigMap', data: { 'config.json': expect.any(String) } });
    expect(doc('secret.yaml')).toMatchObject({ kind: 'Secret', stringData: { token: PLACEHOLDER, databaseUrl: PLACEHOLDER } });
    expect(templates.get('secret.yaml')).toMatch(/^\{\{- if \.Values\.secret\.create \}\}/);
  });

  it('writes a config file the daemon accepts, whose Host list holds the Service names', () => {
    const helpers = templates.get('_helpers.tpl') as string;
    const owned = /dict "host" "0\.0\.0\.0" "port" \(int \.Values\.service\.port\) "allowedHosts" \(uniq \$hosts\) "allowedOrigins" \.Values\.allowedOrigins/;
    expect(helpers).toMatch(owned);
    expect(helpers).toContain('printf "%s.%s.svc.cluster.local" $fullname $ns');
    // What the template builds for release "sb" in "default", with the default values.
    const config = {
      ...(values.config as object),
      host: '0.0.0.0',
      port: 7337,
      allowedHosts: ['sb-switchboard', 'sb-switchboard.default', 'sb-switchboard.default.svc', 'sb-switchboard.default.svc.cluster.local'],
      allowedOrigins: values.allowedOrigins,
    };
    expect(DaemonConfigSchema.safeParse(config).success).toBe(true);
  });

  it('keeps a PodDisruptionBudget on by default and the HPA off unless asked', () => {
    expect(doc('pdb.yaml')).toMatchObject({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', spec: { minAvailable: 1 } });
    expect(valueAt('podDisruptionBudget.enabled')).toBe(true);
    expect(valueAt('autoscaling.enabled')).toBe(false);
    const hpa = (templates.get('hpa.yaml') as string).trim().split('\n');
    expect(hpa[0]).toBe('{{- if .Values.autoscaling.enabled }}');
    expect(hpa.at(-1)).toBe('{{- end }}');
    expect(doc('hpa.yaml')).toMatchObject({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', spec: { minReplicas: 2, maxReplicas: 10 } });
  });

  it('routes 2025-era sessions by Mcp-Session-Id through ingress-nginx when the ingress is on', () => {
    expect(valueAt('ingress.enabled')).toBe(false);
    expect(valueAt('ingress.annotations')).toMatchObject({ 'nginx.ingress.kubernetes.io/upstream-hash-by': '$http_mcp_session_id' });
    expect(doc('ingress.yaml')).toMatchObject({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' });
  });
});
