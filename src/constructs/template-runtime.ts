/** What serves a template's runtime API, and where: read by the template, its readiness probe and the descriptor. */

/** The process in the pod that executes commands, and its endpoint. */
export interface TemplateRuntime {
  /** `sandboxd` (gRPC 9090 + REST 8080 on 127.0.0.1, `packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`), `python-runtime` (HTTP 8888, `examples/python-runtime-sandbox/main.py@v0.5.6`), or `custom`. */
  readonly kind: 'sandboxd' | 'python-runtime' | 'custom';
  /** Name of the container that runs it. */
  readonly container: string;
  /** TCP ports of the runtime endpoint. */
  readonly ports: readonly number[];
}
