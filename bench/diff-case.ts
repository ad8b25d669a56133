/**
 * One diff in a lean process (only the diff layer loaded), for bench/diff.ts: prints
 * `{"readMs","diffMs","objects","fields"}` as the last line. Usage: node --import tsx bench/diff-case.ts BASE_DIR HEAD_DIR
 */
import { performance } from 'node:perf_hooks';
import { diffManifests, readManifestDir } from '../src/diff/index.js';

const t0 = performance.now();
const documents = new Map();
const [base, head] = await Promise.all([readManifestDir(process.argv[2]!, process.argv[2], { documents }), readManifestDir(process.argv[3]!, process.argv[3], { documents })]);
const t1 = performance.now();
const report = diffManifests(base, head);
const t2 = performance.now();
process.stdout.write(`${JSON.stringify({ readMs: Math.round(t1 - t0), diffMs: Math.round(t2 - t1), objects: report.objects.length, fields: report.objects.reduce((n, o) => n + o.fields.length, 0) })}\n`);
