#!/usr/bin/env node
// Entry point for `npx agentplane`: runs the TypeScript CLI through tsx so no build step is needed after `npm ci`.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
