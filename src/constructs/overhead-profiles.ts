/**
 * Pinned RuntimeClass overhead profiles: the fixed per-pod cost each sandbox runtime adds, with where the figure comes
 * from. Kata figures are the `overhead.podFixed` of the RuntimeClasses kata-deploy ships, per hypervisor
 * (`tools/packaging/kata-deploy/runtimeclasses/kata-runtimeClasses.yaml@f66a5b6287258187ce575db1962acbe7704d252e`,
 * kata-containers/kata-containers). gVisor publishes no fixed figure: its Sentry and Gofer run inside the pod's cgroup
 * and grow with the workload (https://gvisor.dev/docs/architecture_guide/resources, google/gvisor#10264), so its
 * profile is no overhead and the container limits bound the whole sandbox.
 */

/** Kata hypervisors with a kata-deploy RuntimeClass. */
export const KATA_HYPERVISORS = ['qemu', 'clh', 'cloud-hypervisor', 'dragonball', 'fc', 'stratovirt'] as const;
export type KataHypervisor = (typeof KATA_HYPERVISORS)[number];

/** A pinned overhead profile: name, handler, figure and source. */
export interface OverheadProfile {
  /** Default RuntimeClass name and handler. */
  readonly name: string;
  readonly handler: string;
  /** `undefined`: no fixed overhead. */
  readonly overhead?: { readonly cpu: string; readonly memory: string };
  /** Where the figure comes from (`path@commit` of the upstream file, or a documentation URL). */
  readonly source: string;
}

const KATA_SOURCE =
  'kata-containers/kata-containers tools/packaging/kata-deploy/runtimeclasses/kata-runtimeClasses.yaml@f66a5b6287258187ce575db1962acbe7704d252e';

/** gVisor (`runsc`, handler as in `examples/quickstart/gvisor.md@v0.5.6`). */
export const GVISOR_PROFILE: OverheadProfile = {
  name: 'gvisor',
  handler: 'runsc',
  source:
    'https://gvisor.dev/docs/architecture_guide/resources (no fixed per-pod figure; the sandbox is accounted in the pod cgroup, google/gvisor#10264)',
};

/** Kata per hypervisor: RuntimeClass `kata-<hypervisor>`, figures from kata-deploy. */
export const KATA_PROFILES: Readonly<Record<KataHypervisor, OverheadProfile>> = {
  qemu: { name: 'kata-qemu', handler: 'kata-qemu', overhead: { cpu: '250m', memory: '160Mi' }, source: KATA_SOURCE },
  clh: { name: 'kata-clh', handler: 'kata-clh', overhead: { cpu: '250m', memory: '130Mi' }, source: KATA_SOURCE },
  'cloud-hypervisor': {
    name: 'kata-cloud-hypervisor',
    handler: 'kata-cloud-hypervisor',
    overhead: { cpu: '250m', memory: '130Mi' },
    source: KATA_SOURCE,
  },
  dragonball: {
    name: 'kata-dragonball',
    handler: 'kata-dragonball',
    overhead: { cpu: '250m', memory: '130Mi' },
    source: KATA_SOURCE,
  },
  fc: { name: 'kata-fc', handler: 'kata-fc', overhead: { cpu: '250m', memory: '130Mi' }, source: KATA_SOURCE },
  stratovirt: {
    name: 'kata-stratovirt',
    handler: 'kata-stratovirt',
    overhead: { cpu: '250m', memory: '130Mi' },
    source: KATA_SOURCE,
  },
};
