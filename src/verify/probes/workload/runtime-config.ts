/**
 * The static runtime facts of a template, from the plan alone: which runtime it runs and whether the client's
 * transport can carry that runtime's protocol and file API.
 */
import type { TemplatePlan, VerifyPlan } from '../../plan.js';
import type { WorkloadFacts } from './facts.js';

/** Records the runtime configuration evidence; false when the runtime is custom, so nothing more can be proven. */
export function runtimeConfigEvidence(
  f: WorkloadFacts,
  template: TemplatePlan,
  transport: VerifyPlan['transport'],
): boolean {
  const subject = `template ${template.namespace}/${template.name}`;
  if (template.runtime === 'custom') {
    const msg = 'the template runs a custom runtime the adapter does not speak: execution cannot be proven';
    f.exec.add('discovered', 'missing', subject, 'CustomRuntime', msg);
    f.files.add('discovered', 'missing', subject, 'CustomRuntime', msg);
    f.template.add('verified', 'unknown', subject, 'CustomRuntime', msg);
    return false;
  }
  f.exec.proven(
    'discovered',
    subject,
    'RuntimeDeclared',
    `template runs ${template.runtime} (ports ${template.ports.rest}${template.ports.grpc ? `/${template.ports.grpc}` : ''})`,
  );
  f.exec.proven('compatible', subject, 'RuntimeSpoken', `${template.runtime} is a runtime the adapter speaks`);
  if (template.runtime === 'sandboxd' && transport === 'router') {
    f.exec.add(
      'configured',
      'missing',
      subject,
      'TransportCannotCarryRuntime',
      'transport router cannot carry sandboxd gRPC (the router forwards HTTP/1.1 only, sandbox-router/proxy/proxy.go@v0.5.6): use port-forward',
    );
  } else {
    f.exec.proven(
      'configured',
      subject,
      'TransportReachesRuntime',
      `transport ${transport} reaches ${template.runtime}`,
    );
  }
  if (template.runtime === 'sandboxd') {
    f.files.proven('discovered', subject, 'FileApiServed', 'sandboxd serves /v1/files (REST)');
    f.files.proven(
      'compatible',
      subject,
      'FileApiSpoken',
      'sandboxd file API spec v1 (sandboxd-spec/filesystem/v1/filesystem.yaml@v0.5.6)',
    );
    f.files.proven(
      'configured',
      subject,
      'FileApiReachable',
      `REST port ${template.ports.rest} reachable over ${transport}`,
    );
  } else {
    f.files.proven(
      'discovered',
      subject,
      'FileApiServed',
      'the python runtime serves POST /upload, GET /download/…, /list/…, /exists/… (examples/python-runtime-sandbox/main.py@v0.5.6)',
    );
    f.files.proven(
      'compatible',
      subject,
      'FileApiSpoken',
      'the adapter speaks that API as the official client does (k8s_agent_sandbox/files/filesystem.py@1.0.8)',
    );
    f.files.proven(
      'configured',
      subject,
      'FileApiReachable',
      `HTTP port ${template.ports.rest} reachable over ${transport}`,
    );
  }
  return true;
}
