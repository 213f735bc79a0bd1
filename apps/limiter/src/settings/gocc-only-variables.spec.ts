import { goccOnlyVariableWarnings } from './gocc-only-variables';

describe("GoCC's variables the limiter does not read", () => {
  it('names each one that is set, and what does its job here', () => {
    const warnings = goccOnlyVariableWarnings({
      INSTANCE_URLS: 'http://a:8080,http://b:8080',
      SERVER_TYPE: 'echo-http2',
      LOG_2XX: ' ',
      MAX_REQUESTS: '10',
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^INSTANCE_URLS .*scope: cluster/);
    expect(warnings[1]).toMatch(/^SERVER_TYPE /);
  });

  it('says nothing for an environment without them', () => {
    expect(goccOnlyVariableWarnings({ PORT: '8080' })).toEqual([]);
  });
});
