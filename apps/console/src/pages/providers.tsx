import type { PageProps } from './page-props';

export function ProvidersPage(_props: PageProps) {
  return <h1>Providers</h1>;
}
