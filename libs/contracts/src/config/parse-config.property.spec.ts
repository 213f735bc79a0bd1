import fc from 'fast-check';
import { ConfigError } from './config-error';
import { CONTRACT_CONFIG_EXAMPLE } from './contract-example.test-util';
import { parseConfigFile } from './parse-config';

/** A config or a ConfigError naming a line inside the text; anything else fails the property. */
function configOrConfigError(text: string): void {
  try {
    const config = parseConfigFile(text, { source: 'ratelimit.yaml' });
    expect(config.quotas[0]?.name).toBe('default');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.source).toBe('ratelimit.yaml');
    expect(error.message).not.toMatch(/could not be read|nested too deeply to be read/);
    const lineCount = text.split(/\r\n|\r|\n/).length;
    for (const issue of error.issues) {
      expect(issue.message.length).toBeGreaterThan(0);
      if (issue.line !== undefined) expect(issue.line).toBeLessThanOrEqual(lineCount + 1);
    }
  }
}

const YAML_CHARS = fc.constantFrom(...'[]{}:,-#&*!|>\'"%@` \n\t?0a.~');

describe('parseConfigFile on any text', () => {
  it('returns a config or throws a ConfigError for arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ unit: YAML_CHARS, maxLength: 200 }), configOrConfigError), {
      numRuns: 2000,
    });
  });

  it('does so for the contract example with characters inserted, removed or replaced', () => {
    const edit = fc.record({
      at: fc.nat({ max: CONTRACT_CONFIG_EXAMPLE.length }),
      remove: fc.nat({ max: 8 }),
      insert: fc.string({ unit: YAML_CHARS, maxLength: 8 }),
    });
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        let text = CONTRACT_CONFIG_EXAMPLE;
        for (const { at, remove, insert } of edits) {
          text = text.slice(0, at) + insert + text.slice(at + remove);
        }
        configOrConfigError(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses nesting at any depth past the limit without crashing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 65, max: 5000 }), fc.boolean(), (depth, flow) => {
        const text = flow
          ? `quotas: ${'['.repeat(depth)}${']'.repeat(depth)}`
          : `quotas:\n${Array.from({ length: depth }, (_, i) => `${' '.repeat(i + 1)}- `).join('\n')}1`;
        expect(() => parseConfigFile(text)).toThrow(ConfigError);
      }),
      { numRuns: 50 },
    );
  });
});
