/**
 * Case import-release-bundle: import tools choke on real release bundles (non-CRD documents,
 * empty and comment-only documents, ~400 KB schemas, open schemas). Our import path (scripts/crd-bundle.ts, used by
 * `npm run import`) must keep only the CRDs and say what it skipped, complete on the ~800 KB set, map int-or-string to
 * a number-or-string type, and give an open schema an open `spec`. Its time and memory budget (60 s, 1 GiB) is
 * measured by `npm run bench` (bench/import.ts, figures in bench/README.md) on the same bundle, not asserted here;
 * jest's timeout on the import only stops a hang.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { OPEN_CRD, releaseBundle } from '../../bench/import-bundle.js';
import * as template056 from '../../imports/v056-extensions.agents.x-k8s.io.js';
import {
  BundleDocumentError,
  describeExtraction,
  extractCrds,
  runCdk8sImport,
  type CrdExtraction,
} from '../../scripts/crd-bundle.js';
import { thrownBy } from '../unit/thrown.js';
import { CustomObjectValidator, loadRelease, type LoadedRelease } from '../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from '../unit/releases/helpers.js';

const work = tempDir('case19');
let release: LoadedRelease;
let bundle: string;
let extraction: CrdExtraction;
const out = join(work.dir, 'imports');

beforeAll(async () => {
  release = await loadRelease('v0.5.6', { mirror: SHARED_MIRROR, cacheDir: join(work.dir, 'cache') });
  bundle = releaseBundle(release);
  extraction = extractCrds(bundle, 'bundle.yaml');
  // Hang guards only (the import takes seconds): cdk8s-cli is killed after 170 s, jest gives up after 180 s.
  // Time and memory are benchmarked in bench/import.ts.
  await runCdk8sImport([{ prefix: 'bundle', crds: extraction.crds }], out, 170_000);
}, 180_000);
afterAll(() => work.cleanup());

describe('case import-release-bundle', () => {
  test('the bundle is the ~800 KB real set', () => {
    expect(Buffer.byteLength(bundle)).toBeGreaterThan(800_000);
  });

  test('keeps only the CustomResourceDefinitions and says how many other documents it skipped', () => {
    expect(extraction.crds.map((c) => c.metadata?.name)).toEqual([
      'sandboxes.agents.x-k8s.io',
      'sandboxclaims.extensions.agents.x-k8s.io',
      'sandboxtemplates.extensions.agents.x-k8s.io',
      'sandboxwarmpools.extensions.agents.x-k8s.io',
      'gadgets.example.com',
    ]);
    expect(extraction.skipped).toEqual([
      'Namespace/agent-sandbox-system',
      'ServiceAccount/controller',
      'ClusterRole/controller',
      'Deployment/controller',
      'Service/webhook',
    ]);
    expect(extraction.emptyDocuments).toBe(2);
    expect(describeExtraction('bundle.yaml', extraction)).toBe(
      'bundle.yaml: kept 5 CustomResourceDefinition(s), skipped 5 other document(s) (Namespace/agent-sandbox-system, ServiceAccount/controller, ' +
        'ClusterRole/controller, Deployment/controller, Service/webhook) and 2 empty document(s); open schema given an open spec: gadgets.example.com/v1',
    );
  });

  test('a document that is not a Kubernetes object is refused with its position', () => {
    const err = thrownBy(
      () => extractCrds(`${stringify(OPEN_CRD)}---\njust a string\n`, 'bad.yaml'),
      BundleDocumentError,
      'NotAKubernetesObject',
    );
    expect([err.source, err.document]).toEqual(['bad.yaml', 2]);
  });

  test('one module per API group, with every kind present (none overwritten)', () => {
    expect(readdirSync(out).sort()).toEqual([
      'bundle-agents.x-k8s.io.ts',
      'bundle-example.com.ts',
      'bundle-extensions.agents.x-k8s.io.ts',
    ]);
    const ext = readFileSync(join(out, 'bundle-extensions.agents.x-k8s.io.ts'), 'utf8');
    for (const cls of [
      'SandboxClaim',
      'SandboxClaimV1Alpha1',
      'SandboxTemplate',
      'SandboxTemplateV1Alpha1',
      'SandboxWarmPool',
      'SandboxWarmPoolV1Alpha1',
    ]) {
      expect(ext).toContain(`export class ${cls} extends ApiObject {`);
    }
  });

  test('an open schema gets an open spec (record of unknown values) instead of metadata-only props', () => {
    const gadget = readFileSync(join(out, 'bundle-example.com.ts'), 'utf8');
    expect(gadget).toContain('readonly spec?: { [key: string]: any };');
  });

  test('int-or-string becomes a number-or-string type: a probe port takes 8080 or "http"', () => {
    const generated = readFileSync(join(out, 'bundle-extensions.agents.x-k8s.io.ts'), 'utf8');
    expect(generated).toMatch(
      /export class SandboxTemplateSpecPodTemplateSpecContainersReadinessProbeHttpGetPort \{\s+public static fromNumber\(value: number\)/,
    );
    expect(generated).toContain(
      'public static fromString(value: string): SandboxTemplateSpecPodTemplateSpecContainersReadinessProbeHttpGetPort',
    );

    // the committed bindings come from the same path: both forms synthesize and pass the pinned schema
    const Port = template056.SandboxTemplateSpecPodTemplateSpecContainersReadinessProbeHttpGetPort;
    const chart = Testing.chart();
    for (const [id, port] of [
      ['by-number', Port.fromNumber(8080)],
      ['by-name', Port.fromString('http')],
    ] as const) {
      new template056.SandboxTemplate(chart, id, {
        metadata: { name: id },
        spec: {
          podTemplate: {
            spec: {
              containers: [
                {
                  name: 'c',
                  image: 'r/i:1',
                  ports: [{ name: 'http', containerPort: 8080 }],
                  readinessProbe: { httpGet: { port } },
                },
              ],
            },
          },
        },
      });
    }
    const objects = Testing.synth(chart);
    const ports = objects.map((o) => o.spec.podTemplate.spec.containers[0].readinessProbe.httpGet.port);
    expect(ports).toEqual([8080, 'http']);
    const validator = CustomObjectValidator.forRelease(release);
    for (const o of objects) expect(validator.validate(o)).toEqual([]);
  }, 30_000);
});
