/* eslint-disable @typescript-eslint/no-require-imports -- modules loaded inside isolateModules, after their mocks */
/**
 * @opentelemetry/api is an optional peer: the client must load and work without it, and look for
 * it only when an acquire is made.
 */
describe('trace context', () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('@opentelemetry/api');
  });

  it('does not require @opentelemetry/api when the client is loaded', () => {
    const factory = jest.fn(() => ({}));
    jest.doMock('@opentelemetry/api', factory);
    jest.isolateModules(() => {
      require('./index');
    });
    expect(factory).not.toHaveBeenCalled();
  });

  it('sends nothing when @opentelemetry/api is not installed', () => {
    jest.doMock('@opentelemetry/api', () => {
      throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), {
        code: 'MODULE_NOT_FOUND',
      });
    });
    jest.isolateModules(() => {
      const { activeTraceHeaders } = require('./trace-context') as typeof import('./trace-context');
      expect(activeTraceHeaders()).toBeUndefined();
      expect(activeTraceHeaders()).toBeUndefined();
    });
  });

  it("gives the active span's traceparent and tracestate, and nothing outside a span", () => {
    jest.isolateModules(() => {
      const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
      const { activeTraceHeaders } = require('./trace-context') as typeof import('./trace-context');
      expect(activeTraceHeaders()).toBeUndefined();
      const span = api.trace.wrapSpanContext({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: api.TraceFlags.SAMPLED,
        traceState: api.createTraceState('vendor=value'),
      });
      // No context manager is registered: read the span from a context given explicitly.
      const active = api.trace.setSpan(api.ROOT_CONTEXT, span);
      const spy = jest.spyOn(api.context, 'active').mockReturnValue(active);
      expect(activeTraceHeaders()).toEqual({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'vendor=value',
      });
      spy.mockRestore();
    });
  });
});
