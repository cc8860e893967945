import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const source = readFileSync(new URL('./readme-example.ts', import.meta.url), 'utf8');

describe('README', () => {
  it('shows the example that readme-example.ts type-checks, word for word', () => {
    const start = source.indexOf('// README:start\n') + '// README:start\n'.length;
    const body = source
      .slice(start, source.indexOf('// README:end'))
      .replace("'../src/index.js'", "'@mrtr/receipt'");
    expect(readme).toContain(`\`\`\`ts\n${body}\`\`\``);
  });

  it('whose example runs as its comments say', async () => {
    const { results } = await import('./readme-example.js');
    expect(results).toEqual({
      first: { deleted: 'svc_8f21c', approvedBy: 'user_5f2a' },
      again: 'already_used',
      other: 'arguments_mismatch',
      services: ['svc_other'],
    });
  });
});
