/**
 * One copy of cdk8s and of constructs per app. npm can nest a second copy (a chart library that depends on cdk8s, a
 * pinned `constructs`); constructs made by one copy under a root made by the other fail late and without a cause (an
 * untyped render error, `scope.node._scopes is not iterable`). Every construct of this package checks its scope when it
 * is made, and names both module paths.
 */
import { createRequire } from 'node:module';
import { Construct, type IConstruct } from 'constructs';
import { App } from './cdk8s.js';
import { ConstructError } from './errors.js';

const nodeRequire = createRequire(import.meta.url);
const JSII_RTTI = Symbol.for('jsii.rtti');
const CONSTRUCT_SYM = Symbol.for('constructs.Construct');

/** A second copy of `cdk8s` or `constructs` made the scope: `ours` and `theirs` are the two module paths. */
export class DuplicatePackageCopyError extends ConstructError {
  /** The package found twice. */
  readonly packageName: 'cdk8s' | 'constructs';
  /** The module file this package loads. */
  readonly ours: string;
  /** The module file the scope's classes come from (`unknown` when it is not a loaded module file, e.g. bundled). */
  readonly theirs: string;
  constructor(path: string, packageName: 'cdk8s' | 'constructs', ours: string, theirs: string) {
    super(
      path,
      `two copies of ${packageName}: the scope's classes come from ${theirs}, this package's from ${ours}`,
      `keep one ${packageName} in the app: declare it once (npm ls ${packageName}; npm dedupe), at a version inside cdk8s-agentplane's peer range`,
      'DuplicatePackageCopy',
    );
    this.packageName = packageName;
    this.ours = ours;
    this.theirs = theirs;
  }
}

/** The first class on `x`'s prototype chain that owns `test(class)`. */
function classOf(x: object, test: (cls: object, proto: object) => boolean): object | undefined {
  for (let p = Object.getPrototypeOf(x) as object | null; p !== null; p = Object.getPrototypeOf(p) as object | null) {
    const cls = (p as { constructor?: object }).constructor;
    if (cls !== undefined && test(cls, p)) return cls;
  }
  return undefined;
}

/** The loaded module file that exports `cls` under `name`, from Node's module cache. */
function moduleFileOf(cls: object, name: string): string {
  for (const [file, mod] of Object.entries(nodeRequire.cache))
    if ((mod?.exports as Record<string, unknown> | undefined)?.[name] === cls) return file;
  return 'unknown';
}

/**
 * `scope`, after checking that the constructs and cdk8s classes of its tree are the ones this package uses; throws
 * {@link DuplicatePackageCopyError} naming `scope.node.path/id` otherwise. Call as `super(sameCopies(scope, id), id)`.
 */
export function sameCopies<S extends IConstruct>(scope: S, id: string): S {
  const path = (): string => [scope.node.path, id].filter((s) => s !== '').join('/');
  if (!Object.prototype.isPrototypeOf.call(Construct.prototype, scope)) {
    const theirs = classOf(scope, (_c, p) => Object.prototype.hasOwnProperty.call(p, CONSTRUCT_SYM));
    if (theirs !== undefined)
      throw new DuplicatePackageCopyError(
        path(),
        'constructs',
        nodeRequire.resolve('constructs'),
        moduleFileOf(theirs, 'Construct'),
      );
  }
  const root = scope.node.root;
  if (!Object.prototype.isPrototypeOf.call(App.prototype, root)) {
    const theirs = classOf(
      root,
      (c) => Object.prototype.hasOwnProperty.call(c, JSII_RTTI) && rttiOf(c) === 'cdk8s.App',
    );
    if (theirs !== undefined)
      throw new DuplicatePackageCopyError(path(), 'cdk8s', nodeRequire.resolve('cdk8s'), moduleFileOf(theirs, 'App'));
  }
  return scope;
}

function rttiOf(cls: object): string | undefined {
  return (cls as { [JSII_RTTI]?: { fqn?: string } })[JSII_RTTI]?.fqn;
}

/** Whether `x` is a cdk8s `App` of any copy (an app's class, or a subclass, carries cdk8s's jsii type name). */
export function isCdk8sApp(x: unknown): x is App {
  return typeof x === 'object' && x !== null && classOf(x, (c) => rttiOf(c) === 'cdk8s.App') !== undefined;
}

/**
 * Makes `instanceof cls` (and zod's `z.instanceof(cls)`) hold for instances of `cls` made by another copy of this
 * package too: they carry the mark `Symbol.for('cdk8s-agentplane.<name>')`. A subclass keeps the plain prototype test.
 */
export function brand(cls: abstract new (...args: never[]) => object, name: string): void {
  const mark = Symbol.for(`cdk8s-agentplane.${name}`);
  Object.defineProperty(cls.prototype, mark, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: object, x: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, x)) return true;
      return this === cls && typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[mark] === true;
    },
  });
}
