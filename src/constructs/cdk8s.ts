/**
 * The cdk8s classes the constructs use, loaded with require: an ES import of the CommonJS package makes Node scan its
 * entry and every module the entry re-exports for their export names on each start (~50 ms of CPU). The same module
 * objects as `import ... from 'cdk8s'` (one CommonJS module cache).
 */
import { createRequire } from 'node:module';
import type * as cdk8s from 'cdk8s';

const loaded = createRequire(import.meta.url)('cdk8s') as typeof cdk8s;

export const { ApiObject, App, Chart, YamlOutputType } = loaded;
export type ApiObject = cdk8s.ApiObject;
export type App = cdk8s.App;
export type Chart = cdk8s.Chart;
export type YamlOutputType = cdk8s.YamlOutputType;
