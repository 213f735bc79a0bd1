import { ProvidersDocument } from '../api/generated';
import { ErrorBanner } from '../ui/error-banner';
import { useRequest } from '../ui/use-request';
import type { PageProps } from './page-props';
import { ProviderPanel } from './providers/provider-panel';

/** LLM provider profiles: which are served, and each model's RPM, TPM and RPD (0 = unlimited). */
export function ProvidersPage(props: PageProps) {
  const { api, canWrite } = props.session;
  const providers = useRequest(() => api.request(ProvidersDocument), [api]);
  return (
    <>
      <h1>Providers</h1>
      <p class="muted">
        An enabled provider serves a quota per model, named after the model. 0 means unlimited.
      </p>
      <ErrorBanner error={providers.error} />
      {providers.data === undefined && providers.loading && <p class="loading">Loading…</p>}
      {providers.data?.providers.length === 0 && <p class="muted">No providers.</p>}
      {providers.data?.providers.map((p) => (
        <ProviderPanel key={p.name} api={api} canWrite={canWrite} provider={p} />
      ))}
    </>
  );
}
