/**
 * `-o` is the same on every command that prints a report: table|json|yaml|markdown, and `text` (= table) on diff and
 * plan-upgrade, which printed `text` before; json and yaml carry the same data.
 */
import { Command } from 'commander';
import { parse } from 'yaml';
import { registerCompat } from '../../../src/cli/commands/compat.js';
import { registerDiff } from '../../../src/cli/commands/diff.js';
import { registerMirror } from '../../../src/cli/commands/mirror.js';
import { registerPlanUpgrade } from '../../../src/cli/commands/plan-upgrade.js';
import { registerSynth } from '../../../src/cli/commands/synth.js';
import { registerVerify } from '../../../src/cli/commands/verify.js';
import { outputFormat, renderWith } from '../../../src/cli/output.js';

const program = new Command('agentplane');
for (const register of [
  registerCompat,
  registerDiff,
  registerMirror,
  registerPlanUpgrade,
  registerSynth,
  registerVerify,
])
  register(program);

test.each([
  ['compat', false],
  ['diff', true],
  ['mirror', false],
  ['plan-upgrade', true],
  ['synth', false],
  ['verify', false],
] as const)('%s: -o choices (text alias: %s)', (name, textAlias) => {
  let cmd = program.commands.find((c) => c.name() === name)!;
  if (name === 'mirror') cmd = cmd.commands.find((c) => c.name() === 'pull')!;
  const option = cmd.options.find((o) => o.long === '--output')!;
  expect(option.short).toBe('-o');
  expect(option.argChoices).toEqual(['table', 'json', 'yaml', 'markdown', ...(textAlias ? ['text'] : [])]);
});

test.each(['compat', 'diff', 'mirror', 'plan-upgrade', 'synth', 'verify'])('%s: -o defaults to table', (name) => {
  let cmd = program.commands.find((c) => c.name() === name)!;
  if (name === 'mirror') cmd = cmd.commands.find((c) => c.name() === 'pull')!;
  expect(cmd.options.find((o) => o.long === '--output')!.defaultValue).toBe('table');
});

test('text is table; json and yaml are the same data; table and markdown the views', () => {
  expect(outputFormat('text')).toBe('table');
  expect(outputFormat('yaml')).toBe('yaml');
  const data = { rows: [{ part: 'kubernetes', tested: 'yes', on: 'on' }] };
  const views = { table: () => 'T\n', markdown: () => 'M\n' };
  expect(JSON.parse(renderWith('json', () => data, views))).toEqual(data);
  expect(
    parse(
      renderWith('yaml', () => data, views),
      { version: '1.1' },
    ),
  ).toEqual(data);
  expect(renderWith('table', () => data, views)).toBe('T\n');
  expect(renderWith('markdown', () => data, views)).toBe('M\n');
});
